"""The admin API (issue 23) on a real gunicorn, as a billing program and a support script meet
it: service clients registered with the real CLI (`flask clients add`), their tokens from
/oauth2/token (client_credentials, HTTP Basic), a person's tokens from /api/v2, and the billing
webhook example (examples/billing_webhook) run in-process against the server."""

from __future__ import annotations

import base64
import importlib.util
import json
import uuid
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
import requests
from flask.testing import FlaskClient

from tests.support.admin import printed_credentials
from tests.support.api import (
    all_at_once,
    assert_problem,
    get,
    login,
    new_email,
    post,
    refresh,
    signup,
    verify,
)
from tests.support.http import TIMEOUT, bearer
from tests.support.server import ROOT, flask_cli
from tests.support.servers import free_port
from tests.support.sqlite_server import Server, service_env

pytestmark = pytest.mark.e2e

ADMIN = "/api/admin/v1"
EXAMPLE = ROOT / "examples" / "billing_webhook" / "app.py"
WEBHOOK_SECRET = "a shared secret the payment provider sends"
Credentials = tuple[str, str]


# Helpers -------------------------------------------------------------------------------------

def add_client(server: Server, name: str, *scopes: str) -> Credentials:
    """`flask --app wsgi clients add NAME --scope ...` on the server's database, as an operator
    runs it; the client id and the secret it prints once."""
    options = [arg for scope in scopes for arg in ("--scope", scope)]
    result = flask_cli(service_env(server), "clients", "add", name, *options)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"scopes {' '.join(scopes)}\n" in result.stdout, result.stdout
    return printed_credentials(result.stdout)


def client_token(server: Server, credentials: Credentials,
                 scope: str | None = None) -> dict[str, Any]:
    answer = requests.post(server.url("/oauth2/token"), auth=credentials, timeout=TIMEOUT,
                           data={"grant_type": "client_credentials",
                                 **({"scope": scope} if scope else {})})
    assert answer.status_code == 200, answer.text
    issued: dict[str, Any] = answer.json()
    return issued


def admin(server: Server, method: str, path: str, token: str, body: Any = None,
          **headers: str) -> requests.Response:
    return requests.request(method, server.url(ADMIN + path), json=body, timeout=TIMEOUT,
                            headers={**bearer(token), **headers})


def claims(jwt: str) -> dict[str, Any]:
    """A JWT's payload, unchecked (the server checks it; this reads what it carries)."""
    segment = jwt.split(".")[1]
    padded = segment + "=" * (-len(segment) % 4)
    payload: dict[str, Any] = json.loads(base64.urlsafe_b64decode(padded))
    return payload


def tokens_issued(server: Server, credentials: Credentials) -> int:
    """How many client_credentials tokens the client was issued so far (the audit trail)."""
    [(count,)] = server.query("SELECT count(*) FROM audit_events WHERE event = ? AND actor = ?",
                              "client_token_issued", f"client:{credentials[0]}")
    return int(count)


def events(server: Server, support: str, user_id: str, kind: str) -> list[dict[str, Any]]:
    answer = admin(server, "GET", f"/users/{user_id}/events?kind={kind}", support)
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["events"]
    return found


# Fixtures ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def billing_client(server: Server) -> Credentials:
    return add_client(server, f"billing-{uuid.uuid4().hex[:8]}", "users:plan")


@pytest.fixture(scope="module")
def support_client(server: Server) -> Credentials:
    return add_client(server, f"support-{uuid.uuid4().hex[:8]}",
                      "users:read", "users:write", "sessions:revoke", "audit:read")


@pytest.fixture(scope="module")
def billing(server: Server, billing_client: Credentials) -> str:
    """A billing token (scope users:plan)."""
    issued = client_token(server, billing_client, "users:plan")
    assert issued["scope"] == "users:plan" and issued["token_type"] == "Bearer"
    return str(issued["access_token"])


@pytest.fixture(scope="module")
def support(server: Server, support_client: Credentials) -> str:
    """A support token, with every scope its client was registered with (none asked)."""
    issued = client_token(server, support_client)
    assert issued["scope"] == "users:read users:write sessions:revoke audit:read"
    return str(issued["access_token"])


@pytest.fixture
def person(server: Server) -> dict[str, Any]:
    """Someone who signed up and logged in through /api/v2: the login's tokens and user."""
    email = new_email("person")
    signup(server, email)
    logged_in = login(server, email)
    assert logged_in.status_code == 200, logged_in.text
    body: dict[str, Any] = logged_in.json()
    return body


def load_example() -> ModuleType:
    name = f"billing_webhook_{uuid.uuid4().hex[:8]}"
    spec = importlib.util.spec_from_file_location(name, EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def example() -> ModuleType:
    return load_example()


@pytest.fixture
def webhook(server: Server, billing_client: Credentials,
            example: ModuleType) -> Iterator[FlaskClient]:
    """The example app, pointed at the server, behind Flask's test client."""
    app = example.create_app({
        "SVC_AUTH_URL": server.base_url + "/", "SVC_CLIENT_ID": billing_client[0],
        "SVC_CLIENT_SECRET": billing_client[1], "BILLING_WEBHOOK_SECRET": WEBHOOK_SECRET})
    yield app.test_client()
    app.extensions["svc_admin_api"].http.close()


def deliver(webhook: FlaskClient, event: Any, secret: str = WEBHOOK_SECRET) -> Any:
    return webhook.post("/webhooks/billing", json=event, headers={"X-Billing-Secret": secret})


def subscription_event(user_id: str, plan: str, event_id: str | None = None) -> dict[str, Any]:
    return {"type": "customer.subscription.updated", "id": event_id or f"evt_{uuid.uuid4().hex}",
            "data": {"svc_user_id": user_id, "plan": plan}}


def plan_seen_by_verify(server: Server, access_token: str) -> str:
    checked = verify(server, access_token)
    assert checked.status_code == 200, checked.text
    return str(checked.json()["user"]["plan"])


# Billing sets a plan ---------------------------------------------------------------------------

def test_a_plan_billing_sets_is_verified_at_once_and_carried_by_the_next_refresh(
        server: Server, billing: str, support: str, person: dict[str, Any]) -> None:
    user_id, access = person["user"]["id"], person["access_token"]
    assert plan_seen_by_verify(server, access) == "free"
    assert claims(billing)["aud"] == "svc-admin" and claims(billing)["scope"] == "users:plan"

    changed = admin(server, "PATCH", f"/users/{user_id}", billing, {"plan": "pro"})
    assert changed.status_code == 200, changed.text
    assert changed.json()["plan"] == "pro" and changed.json()["id"] == user_id
    assert changed.headers["Cache-Control"] == "no-store"

    # The person's existing access token: every worker (4) answers with the new plan at once,
    # though the token itself still says what it was issued with.
    assert {plan_seen_by_verify(server, access) for _ in range(8)} == {"pro"}
    assert claims(access)["plan"] == "free"

    refreshed = refresh(server, person["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user"]["plan"] == "pro"
    assert claims(refreshed.json()["access_token"])["plan"] == "pro"

    [audited] = events(server, support, user_id, "plan_changed")
    assert audited["actor"].startswith("client:billing-")


def test_an_idempotency_key_on_patch_is_kept_like_on_post(
        server: Server, billing: str, person: dict[str, Any]) -> None:
    """Every write keeps its Idempotency-Key's answer (the billing example sends the event id):
    a redelivery is a replay, and the key with another plan is refused."""
    user_id = person["user"]["id"]
    key = {"Idempotency-Key": f"evt_{uuid.uuid4().hex}"}
    answers = [admin(server, "PATCH", f"/users/{user_id}", billing, {"plan": "pro"}, **key)
               for _ in range(2)]
    assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
    assert [a.headers.get("Idempotent-Replayed") for a in answers] == [None, "true"]
    other = admin(server, "PATCH", f"/users/{user_id}", billing, {"plan": "team"}, **key)
    assert_problem(other, 422, "idempotency_key_reused")
    assert plan_seen_by_verify(server, person["access_token"]) == "pro"


# What each token may do --------------------------------------------------------------------

@pytest.mark.parametrize(("method", "path", "body", "scope"), [
    ("GET", "/users", None, "users:read"),
    ("GET", "/users/{id}", None, "users:read"),
    ("PATCH", "/users/{id}", {"full_name": "Eve"}, "users:write"),
    ("POST", "/users/{id}/disable", None, "users:write"),
    ("DELETE", "/users/{id}/sessions", None, "sessions:revoke"),
    ("GET", "/users/{id}/events", None, "audit:read"),
])
def test_the_billing_token_gets_403_naming_the_scope_it_lacks(
        server: Server, billing: str, person: dict[str, Any], method: str, path: str,
        body: Any, scope: str) -> None:
    refused = admin(server, method, path.format(id=person["user"]["id"]), billing, body)
    assert_problem(refused, 403, "insufficient_scope")
    assert refused.headers["WWW-Authenticate"] == (
        f'Bearer realm="svc-auth", error="insufficient_scope", scope="{scope}"')
    assert verify(server, person["access_token"]).json()["user"]["full_name"] == "Ada"


def test_a_client_gets_no_scope_it_was_not_registered_with(
        server: Server, billing_client: Credentials) -> None:
    refused = requests.post(server.url("/oauth2/token"), auth=billing_client, timeout=TIMEOUT,
                            data={"grant_type": "client_credentials",
                                  "scope": "users:plan users:read"})
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_scope"
    wrong = requests.post(server.url("/oauth2/token"), auth=(billing_client[0], "wrong"),
                          timeout=TIMEOUT, data={"grant_type": "client_credentials"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"


def every_admin_call(user_id: str) -> list[tuple[str, str]]:
    return [("GET", "/users"), ("POST", "/users"),
            ("GET", f"/users/{user_id}"), ("PATCH", f"/users/{user_id}"),
            ("POST", f"/users/{user_id}/disable"), ("POST", f"/users/{user_id}/enable"),
            ("DELETE", f"/users/{user_id}/sessions"), ("DELETE", f"/users/{user_id}/factors"),
            ("POST", f"/users/{user_id}/password-reset"), ("GET", f"/users/{user_id}/events")]


def test_a_persons_access_token_gets_401_on_every_admin_call(
        server: Server, person: dict[str, Any], billing: str) -> None:
    user_id = person["user"]["id"]
    calls = every_admin_call(user_id)
    assert len(set(calls)) == 10
    for method, path in calls:
        body = {"email": new_email("nobody"), "plan": "pro"} if method == "POST" else None
        if method == "PATCH":
            body = {"plan": "pro"}
        answer = admin(server, method, path, person["access_token"], body)
        assert_problem(answer, 401, "invalid_token")
        assert answer.headers["WWW-Authenticate"].startswith("Bearer"), (method, path)
    # Nothing happened to the account, and its session lives on.
    checked = verify(server, person["access_token"])
    assert checked.status_code == 200 and checked.json()["user"]["plan"] == "free"
    # The other way round: a client's token is no person's at /verify.
    assert_problem(verify(server, billing), 401, "invalid_token")


# Idempotency-Key on POST -------------------------------------------------------------------

def test_a_repeated_idempotency_key_answers_the_first_answer_and_acts_once(
        server: Server, support: str) -> None:
    email = new_email("invited")
    key = {"Idempotency-Key": f"create-{uuid.uuid4().hex}"}
    body = {"email": email, "full_name": "Invited", "plan": "team"}
    first = admin(server, "POST", "/users", support, body, **key)
    assert first.status_code == 201, first.text
    again = admin(server, "POST", "/users", support, body, **key)
    assert (again.status_code, again.json()) == (201, first.json())
    assert again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    listed = admin(server, "GET", f"/users?email={email}", support).json()["users"]
    assert [user["id"] for user in listed] == [first.json()["id"]]
    assert len(events(server, support, first.json()["id"], "account_created")) == 1
    # The same key with another request is refused, and creates nothing.
    other_email = new_email("other")
    other = admin(server, "POST", "/users", support, {**body, "email": other_email}, **key)
    assert_problem(other, 422, "idempotency_key_reused")
    assert admin(server, "GET", f"/users?email={other_email}", support).json()["users"] == []
    # Without a key, the same request is a conflict: the account exists.
    assert_problem(admin(server, "POST", "/users", support, body), 409, "email_taken")


def test_copies_of_a_keyed_request_at_once_create_one_account(server: Server,
                                                              support: str) -> None:
    """A webhook delivered twice at the same moment, to different workers: one account; every
    copy gets the first answer (a later one waits for it), never "email taken"."""
    email = new_email("raced")
    key = {"Idempotency-Key": f"race-{uuid.uuid4().hex}"}
    copies = all_at_once(8, lambda _: admin(server, "POST", "/users", support,
                                            {"email": email}, **key))
    created = [copy for copy in copies if copy.status_code == 201]
    assert len(created) == 8, [copy.text for copy in copies]
    assert len({json.dumps(c.json(), sort_keys=True) for c in created}) == 1
    assert sum("Idempotent-Replayed" not in c.headers for c in created) == 1
    listed = admin(server, "GET", f"/users?email={email}", support).json()["users"]
    assert [user["id"] for user in listed] == [created[0].json()["id"]]


def test_a_repeated_password_reset_sends_one_mail(server: Server, support: str,
                                                  person: dict[str, Any]) -> None:
    user_id = person["user"]["id"]
    key = {"Idempotency-Key": f"reset-{uuid.uuid4().hex}"}
    answers = [admin(server, "POST", f"/users/{user_id}/password-reset", support, **key)
               for _ in range(3)]
    assert [a.status_code for a in answers] == [202] * 3, [a.text for a in answers]
    assert answers[1].json() == answers[2].json() == answers[0].json()
    assert [a.headers.get("Idempotent-Replayed") for a in answers] == [None, "true", "true"]
    sent = events(server, support, user_id, "password_reset_sent_by_operator")
    assert len(sent) == 1 and sent[0]["actor"].startswith("client:support-")


# The billing webhook example ---------------------------------------------------------------

def test_the_billing_example_sets_a_plan_and_a_redelivery_is_harmless(
        server: Server, webhook: FlaskClient, billing_client: Credentials, support: str,
        person: dict[str, Any]) -> None:
    user_id, access = person["user"]["id"], person["access_token"]
    issued_before = tokens_issued(server, billing_client)
    event = subscription_event(user_id, "pro")

    first = deliver(webhook, event)
    assert (first.status_code, first.get_json()) == (200, {"user_id": user_id, "plan": "pro"})
    assert plan_seen_by_verify(server, access) == "pro"
    refreshed = refresh(server, person["refresh_token"])
    assert claims(refreshed.json()["access_token"])["plan"] == "pro"

    again = deliver(webhook, event)  # the provider did not hear our answer, and retries
    assert (again.status_code, again.get_json()) == (200, first.get_json())
    assert plan_seen_by_verify(server, access) == "pro"
    assert len(events(server, support, user_id, "plan_changed")) == 1

    downgraded = deliver(webhook, subscription_event(user_id, "free"))
    assert downgraded.status_code == 200
    assert plan_seen_by_verify(server, access) == "free"
    # One token for the three deliveries: the example keeps it.
    assert tokens_issued(server, billing_client) == issued_before + 1


def test_the_billing_example_takes_a_new_token_shortly_before_the_old_expires(
        server: Server, webhook: FlaskClient, example: ModuleType,
        billing_client: Credentials, person: dict[str, Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    user_id = person["user"]["id"]
    api = webhook.application.extensions["svc_admin_api"]
    start = tokens_issued(server, billing_client)
    assert deliver(webhook, subscription_event(user_id, "pro")).status_code == 200
    first_token = api.token()
    lifetime = claims(first_token)["exp"] - claims(first_token)["iat"]
    assert lifetime == 3600

    real = example.clock
    monkeypatch.setattr(example, "clock", lambda: real() + lifetime - 2 * example.EARLY)
    assert deliver(webhook, subscription_event(user_id, "team")).status_code == 200
    assert api.token() == first_token and tokens_issued(server, billing_client) == start + 1

    monkeypatch.setattr(example, "clock", lambda: real() + lifetime - example.EARLY / 2)
    assert deliver(webhook, subscription_event(user_id, "free")).status_code == 200
    assert api.token() != first_token and tokens_issued(server, billing_client) == start + 2
    assert plan_seen_by_verify(server, person["access_token"]) == "free"


@pytest.mark.parametrize(("event", "status"), [
    ("not json", 400),
    ([], 400),
    ({"type": "customer.subscription.updated", "id": "evt_1"}, 400),
    ({"type": "customer.subscription.updated", "data": {"svc_user_id": "{id}", "plan": "pro"}},
     400),
    ({"type": "customer.subscription.updated", "id": "evt_1",
      "data": {"svc_user_id": "{id}", "plan": 5}}, 400),
    ({"type": "customer.subscription.updated", "id": "evt_1",
      "data": {"svc_user_id": "{id}", "plan": "Pro Plan"}}, 422),  # not a plan name
    ({"type": "customer.subscription.updated", "id": "evt_1",
      "data": {"svc_user_id": "no-such-account", "plan": "pro"}}, 422),
    ({"type": "invoice.paid", "id": "evt_1", "data": {"svc_user_id": "{id}", "plan": "pro"}},
     200),  # not ours to handle: acknowledged, so that the provider does not retry it
])
def test_the_billing_example_refuses_what_it_cannot_use_and_changes_nothing(
        server: Server, webhook: FlaskClient, person: dict[str, Any], event: Any,
        status: int) -> None:
    sent = json.loads(json.dumps(event).replace("{id}", person["user"]["id"]))
    answer = deliver(webhook, sent)
    assert answer.status_code == status, answer.get_data(as_text=True)
    if status == 200:
        assert answer.get_json() == {"ignored": "invoice.paid"}
    assert plan_seen_by_verify(server, person["access_token"]) == "free"


def test_the_billing_example_refuses_an_unsigned_event(
        server: Server, webhook: FlaskClient, person: dict[str, Any]) -> None:
    event = subscription_event(person["user"]["id"], "pro")
    for secret in ("", "a guess", WEBHOOK_SECRET + "x", "é"):
        assert deliver(webhook, event, secret).status_code == 401
    assert webhook.post("/webhooks/billing", json=event).status_code == 401
    assert plan_seen_by_verify(server, person["access_token"]) == "free"


def test_the_billing_example_asks_for_a_retry_when_the_service_fails(
        server: Server, billing_client: Credentials, example: ModuleType,
        person: dict[str, Any]) -> None:
    event = subscription_event(person["user"]["id"], "pro")
    settings = {"SVC_AUTH_URL": server.base_url, "SVC_CLIENT_ID": billing_client[0],
                "SVC_CLIENT_SECRET": billing_client[1], "BILLING_WEBHOOK_SECRET": WEBHOOK_SECRET}
    for broken, status in (({"SVC_AUTH_URL": f"http://127.0.0.1:{free_port()}"}, 503),
                           ({"SVC_CLIENT_SECRET": "revoked"}, 503)):
        app = example.create_app({**settings, **broken})
        try:
            answer = deliver(app.test_client(), event)
        finally:
            app.extensions["svc_admin_api"].http.close()
        assert answer.status_code == status, answer.get_data(as_text=True)
    assert plan_seen_by_verify(server, person["access_token"]) == "free"
    with pytest.raises(KeyError, match="BILLING_WEBHOOK_SECRET"):
        example.create_app({k: v for k, v in settings.items() if k != "BILLING_WEBHOOK_SECRET"})


def test_the_openapi_document_lists_the_admin_api(server: Server) -> None:
    paths = get(server, "/api/openapi.json").json()["paths"]
    documented = {(method.upper(), path) for path, ops in paths.items()
                  if path.startswith(ADMIN) for method in ops if method != "parameters"}
    expected = {(method, ADMIN + path.replace("USER", "{user_id}"))
                for method, path in every_admin_call("USER")}
    assert expected <= documented, expected - documented
    assert post(server, ADMIN + "/users").status_code == 401  # no token at all
