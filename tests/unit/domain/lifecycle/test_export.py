"""The owner's data export (issue 33 finding 7): what was done to the account and when, by which
role, never the staff's identity, address or device behind an admin read or a console change;
through both doors that give it (the v2 API and the account page's download)."""

from __future__ import annotations

import json

from tests.support import admin
from tests.support.pages import submit
from tests.unit.console.test_views import operator  # noqa: F401 (a fixture)

ADMIN = "/api/admin/v1"
OWNER = {"REMOTE_ADDR": "192.0.2.50", "HTTP_USER_AGENT": "OwnersPhone/1"}
BILLING = {"REMOTE_ADDR": "203.0.113.7", "HTTP_USER_AGENT": "BillingBot/1"}
SUPPORT = {"REMOTE_ADDR": "203.0.113.8", "HTTP_USER_AGENT": "SupportScript/2"}
CONSOLE = {"REMOTE_ADDR": "198.51.100.9", "HTTP_USER_AGENT": "OperatorBrowser/3"}


def staff_act_on(app, client, user, operator_browser):
    billing = admin.token(client, admin.register(app, "billing", "users:plan"))
    support = admin.token(client, admin.register(app, "support", "users:read", "audit:read"))
    assert client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"}, environ_base=BILLING,
                        **admin.authorized(billing)).status_code == 200
    assert client.get(f"{ADMIN}/users/{user.id}", environ_base=SUPPORT,
                      **admin.authorized(support)).status_code == 200
    operator_browser.environ_base.update(CONSOLE)
    assert operator_browser.get(f"/admin/users/{user.id}").status_code == 200
    assert submit(operator_browser, f"/admin/users/{user.id}/edit",
                  {"plan": "team", "full_name": "Ada"}).status_code == 302


def assert_no_staff_in(exported, op):
    text = json.dumps(exported)
    for staff in (*BILLING.values(), *SUPPORT.values(), *CONSOLE.values(), op.email, op.id,
                  "client:", "operator:"):
        assert staff not in text, staff
    events = exported["audit_events"]
    by = {(e["event"], e["by"]) for e in events}
    assert {("plan_changed", "billing"), ("admin_api:show_user", "support"),
            ("console:account", "support"), ("plan_changed", "support")} <= by
    for event in events:
        if event["by"] is not None:
            assert event["ip"] is None and event["device"] is None, event
    [signed_in] = [e for e in events if e["event"] == "login_succeeded"]
    assert (signed_in["by"], signed_in["ip"], signed_in["device"]) == (
        None, OWNER["REMOTE_ADDR"], OWNER["HTTP_USER_AGENT"])
    changed = [e["changes"] for e in events if e["event"] == "plan_changed"]
    assert changed == [{"plan": {"before": "free", "after": "pro"}},
                       {"plan": {"before": "pro", "after": "team"}}]


def test_the_api_export_names_roles_not_staff(app, client, user, operator):  # noqa: F811
    browser, op, _secret = operator
    tokens = client.post("/api/v2/auth/login", environ_base=OWNER,
                         json={"email": user.email, "password": user.password}).get_json()
    staff_act_on(app, client, user, browser)
    answer = client.get("/api/v2/auth/account/export", environ_base=OWNER,
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert answer.status_code == 200
    assert_no_staff_in(answer.get_json(), op)


def test_the_page_download_names_roles_not_staff(app, client, user, operator):  # noqa: F811
    browser, op, _secret = operator
    owner = app.test_client()
    owner.environ_base.update(OWNER)
    assert submit(owner, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    staff_act_on(app, client, user, browser)
    answer = owner.get("/account/export")
    assert answer.status_code == 200
    assert_no_staff_in(json.loads(answer.data), op)
