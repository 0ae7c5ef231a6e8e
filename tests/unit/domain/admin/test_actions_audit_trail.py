"""The admin API's audit trail (issue 33 finding 6, issue 36): every read leaves a trace on the
accounts it showed, a call refused for its scope is traced, a change carries its before and after
values (never a secret), and the events listing leaves reads out unless asked for."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.domain import audit
from app.extensions import db
from app.models import TotpFactor, User
from tests.support.admin import authorized
from tests.support.audit import audit_rows
from tests.support.second_factors import enrolled_user
from tests.unit.api.test_admin import ADMIN, billing, support  # noqa: F401 (fixtures)


def listed(client, token, user_id, **query):
    answer = client.get(f"{ADMIN}/users/{user_id}/events", query_string=query, **authorized(token))
    assert answer.status_code == 200, answer.get_json()
    return answer.get_json()["events"]


def test_a_search_by_address_is_traced_on_the_account_it_found(app, client, user, make_user,
                                                               support):  # noqa: F811
    other = make_user("bob@example.com")
    found = client.get(f"{ADMIN}/users", query_string={"email": user.email}, **authorized(support))
    assert [u["id"] for u in found.get_json()["users"]] == [user.id]
    traced = audit_rows(app, event="admin_api:list_users")
    assert [(e.user_id, e.actor, e.read) for e in traced] == [(user.id, "client:support", True)]
    assert not audit_rows(app, event="admin_api:list_users", user_id=other.id)
    # Every account of a page is traced, in one statement; a page with none leaves one trace.
    client.get(f"{ADMIN}/users", **authorized(support))
    assert {e.user_id for e in audit_rows(app, event="admin_api:list_users")} == {user.id, other.id}
    client.get(f"{ADMIN}/users", query_string={"email": "nobody@"}, **authorized(support))
    assert audit_rows(app, event="admin_api:list_users")[-1].user_id is None


def test_reads_are_recorded_but_listed_only_when_asked_for(app, client, user,
                                                           support):  # noqa: F811
    client.get(f"{ADMIN}/users/{user.id}", **authorized(support))
    client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"}, **authorized(support))
    default = [e["event"] for e in listed(client, support, user.id)]
    assert "plan_changed" in default
    assert "admin_api:show_user" not in default and "admin_api:user_events" not in default
    everything = listed(client, support, user.id, include_reads="true")
    reads = {e["event"]: e["read"] for e in everything}
    assert reads["admin_api:show_user"] is True and reads["admin_api:user_events"] is True
    assert reads["plan_changed"] is False
    bad = client.get(f"{ADMIN}/users/{user.id}/events", query_string={"include_reads": "maybe"},
                     **authorized(support))
    assert bad.status_code == 422 and bad.get_json()["code"] == "invalid_body"


def test_a_call_refused_for_its_scope_is_traced(app, client, user, billing):  # noqa: F811
    assert client.get(f"{ADMIN}/users", query_string={"email": user.email},
                      **authorized(billing)).status_code == 403
    assert client.patch(f"{ADMIN}/users/{user.id}", json={"full_name": "Eve"},
                        **authorized(billing)).status_code == 403
    refused = [(e.event, e.actor, e.read) for e in audit_rows(app, actor="client:billing")
               if e.event != "client_token_issued"]
    assert refused == [("admin_api_refused:list_users", "client:billing", False),
                       ("admin_api_refused:update_user", "client:billing", False)]


def test_each_change_carries_its_before_and_after_values(app, client, user,
                                                         support):  # noqa: F811
    client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro", "full_name": "Ada L."},
                 **authorized(support))
    client.post(f"{ADMIN}/users/{user.id}/disable", **authorized(support))
    client.post(f"{ADMIN}/users/{user.id}/enable", **authorized(support))
    created = client.post(f"{ADMIN}/users", json={"email": "cy@example.com", "full_name": "Cy"},
                          **authorized(support)).get_json()
    changes = {e["event"]: e["changes"] for e in listed(client, support, user.id)}
    assert changes["plan_changed"] == {"plan": {"before": "free", "after": "pro"}}
    assert changes["profile_changed"] == {"full_name": {"before": "Ada", "after": "Ada L."}}
    assert changes["account_disabled"] == {"disabled": {"before": False, "after": True}}
    assert changes["account_enabled"] == {"disabled": {"before": True, "after": False}}
    made = {e["event"]: e["changes"] for e in listed(client, support, created["id"])}
    assert made["account_created"] == {"email": {"before": None, "after": "cy@example.com"},
                                       "full_name": {"before": None, "after": "Cy"},
                                       "plan": {"before": None, "after": "free"}}


def test_no_secret_reaches_the_before_and_after_values(app, client, make_user, clock,
                                                       support):  # noqa: F811
    account, secret, codes = enrolled_user(app, make_user, clock, "sec@example.com")
    with app.app_context():
        stored = db.session.get(User, account.id)
        totp = db.session.scalars(select(TotpFactor)).one()
        secrets = {stored.password_hash, account.password, secret, *codes, support}
        secrets |= {str(value) for value in vars(totp).values() if isinstance(value, str | bytes)
                    and len(value) >= 16}
    for call in (lambda: client.patch(f"{ADMIN}/users/{account.id}",
                                      json={"plan": "pro", "full_name": "S"},
                                      **authorized(support)),
                 lambda: client.delete(f"{ADMIN}/users/{account.id}/factors",
                                       **authorized(support)),
                 lambda: client.delete(f"{ADMIN}/users/{account.id}/sessions",
                                       **authorized(support)),
                 lambda: client.post(f"{ADMIN}/users/{account.id}/password-reset",
                                     **authorized(support)),
                 lambda: client.post(f"{ADMIN}/users/{account.id}/disable", **authorized(support)),
                 lambda: client.delete(f"{ADMIN}/users/{account.id}", **authorized(support))):
        assert call().status_code < 300
    events = listed(client, support, account.id, include_reads="true")
    assert {"second_factors_reset", "sessions_ended", "deletion_scheduled"} <= {
        e["event"] for e in events}
    written = " ".join(str(e) for e in events)
    for held in secrets:
        assert held not in written
    factors = {e["event"]: e["changes"] for e in events}["second_factors_reset"]
    assert factors == {"second_factors": {"before": ["totp", "recovery_codes"], "after": []}}


def test_only_the_allowed_fields_may_be_written_as_changes(app):
    for secret_field in ("password_hash", "totp_secret", "refresh_token", "token_hash"):
        with pytest.raises(ValueError, match="not an audited field"):
            audit.changed(**{secret_field: ("a", "b")})
    with app.app_context(), pytest.raises(ValueError, match="not an audited field"):
        audit.record("plan_changed", audit.ClientInfo(),
                     changes={"password_hash": {"before": "x", "after": "y"}})


def test_erasure_takes_the_values_and_the_operators_address_out_of_the_trail(
        app, client, make_user, support):  # noqa: F811
    from app.domain.admin import actions, directory
    from app.domain.lifecycle import leaving
    user = make_user("zelda.unique@example.com", full_name="Zelda Quintessence")
    op = make_user("op.unique@example.com")
    client.patch(f"{ADMIN}/users/{user.id}", json={"full_name": "Zelda Q."}, **authorized(support))
    with app.app_context():
        by = audit.ClientInfo(actor=f"operator:{op.id}")
        actions.update(directory.require_user(user.id), by, plan="pro")
    [renamed] = audit_rows(app, event="profile_changed")
    assert renamed.changes["full_name"]["before"] == "Zelda Quintessence"
    [changed] = audit_rows(app, event="plan_changed")
    assert changed.actor_email == "op.unique@example.com"
    with app.app_context():
        leaving.erase(user.id)
        leaving.erase(op.id)
    trail = " ".join(str(vars(e)) for e in audit_rows(app))
    assert "Quintessence" not in trail and "zelda.unique" not in trail
    assert "op.unique" not in trail
    assert audit_rows(app, event="plan_changed")[0].actor == f"operator:{op.id}"
