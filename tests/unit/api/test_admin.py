"""The admin API (issue 23): service clients with scopes, the users endpoints, plan changes seen
at once, Idempotency-Key, and every call audited with the client as the actor."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent, User
from tests.support import admin
from tests.support.admin import authorized

ADMIN = "/api/admin/v1"


@pytest.fixture
def settings():
    from tests.support.oidc import SITES
    return {"CLIENT_SITES": SITES}
EVERY_SCOPE = ("users:read", "users:write", "users:plan", "sessions:revoke", "audit:read")


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", *EVERY_SCOPE))


@pytest.fixture
def billing(app, client):
    return admin.token(client, admin.register(app, "billing", "users:plan"))


def test_billing_sets_a_plan_that_verify_and_the_next_refresh_carry(client, user, login,
                                                                     billing):
    tokens = login(user)
    changed = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"}, **authorized(billing))
    assert changed.status_code == 200, changed.get_json()
    assert changed.get_json()["plan"] == "pro"
    verified = client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert verified.get_json()["user"]["plan"] == "pro"
    refreshed = client.post("/api/v2/auth/refresh",
                            json={"refresh_token": tokens["refresh_token"]}).get_json()
    import jwt
    assert jwt.decode(refreshed["access_token"], options={"verify_signature": False})["plan"] \
        == "pro"


def test_billing_cannot_read_users_or_rename_them(client, user, billing):
    listed = client.get(f"{ADMIN}/users", **authorized(billing))
    assert listed.status_code == 403
    assert listed.get_json()["code"] == "insufficient_scope"
    assert listed.headers["WWW-Authenticate"] == (
        'Bearer realm="svc-auth", error="insufficient_scope", scope="users:read"')
    renamed = client.patch(f"{ADMIN}/users/{user.id}", json={"full_name": "Eve"},
                           **authorized(billing))
    assert renamed.status_code == 403


def test_a_client_gets_no_scope_it_was_not_registered_with(app, client):
    credentials = admin.register(app, "billing", "users:plan")
    refused = client.post("/oauth2/token", data={"grant_type": "client_credentials",
                                                 "scope": "users:plan users:read"},
                          auth=credentials)
    assert refused.status_code == 400 and refused.get_json()["error"] == "invalid_scope"
    granted = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                          auth=credentials)
    assert granted.get_json()["scope"] == "users:plan"


def test_a_persons_token_an_id_token_and_a_sites_own_token_get_401(client, user, login):
    from tests.support.oidc import CONFIDENTIAL, SECRET
    person = login(user)["access_token"]
    site_own = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                           auth=(CONFIDENTIAL, SECRET)).get_json()["access_token"]
    for untrusted in (person, site_own, "not-a-token"):
        for method, path in (("get", "/users"), ("post", "/users"),
                             ("get", f"/users/{user.id}"), ("patch", f"/users/{user.id}"),
                             ("post", f"/users/{user.id}/disable"),
                             ("delete", f"/users/{user.id}/sessions"),
                             ("get", f"/users/{user.id}/events")):
            answer = getattr(client, method)(f"{ADMIN}{path}", json={"plan": "pro"},
                                             **authorized(untrusted))
            assert answer.status_code == 401, (method, path, answer.get_json())
            assert answer.mimetype == "application/problem+json"


def test_a_removed_client_or_scope_stops_at_once(app, client, user):
    from app.domain.clients import service_clients
    credentials = admin.register(app, "support", "users:read")
    access = admin.token(client, credentials)
    assert client.get(f"{ADMIN}/users", **authorized(access)).status_code == 200
    with app.app_context():
        service_clients.remove("support")
    assert client.get(f"{ADMIN}/users", **authorized(access)).status_code == 401


def test_one_user_shows_what_support_needs_and_no_secret(client, user, login, support):
    login(user)
    shown = client.get(f"{ADMIN}/users/{user.id}", **authorized(support)).get_json()
    assert shown["email"] == user.email and shown["status"] == "active"
    assert shown["open_sessions"] == 1 and shown["last_sign_in_at"]
    assert shown["second_factors"] == {"totp": 0, "passkey": 0, "recovery_codes_left": 0}
    text = str(shown)
    assert "argon2" not in text and "hash" not in text and "secret" not in text
    assert client.get(f"{ADMIN}/users/nobody", **authorized(support)).status_code == 404


def test_disable_ends_every_session_and_enable_lets_the_account_in(client, user, login,
                                                                   support):
    tokens = login(user)
    assert client.post(f"{ADMIN}/users/{user.id}/disable",
                       **authorized(support)).get_json()["status"] == "disabled"
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": tokens["refresh_token"]}).status_code == 401
    refused = client.post("/api/v2/auth/login",
                          json={"email": user.email, "password": user.password})
    assert refused.status_code in (401, 403)
    client.post(f"{ADMIN}/users/{user.id}/enable", **authorized(support))
    login(user)


def test_create_invites_the_owner_to_choose_a_password(app, client, support, mailbox):
    created = client.post(f"{ADMIN}/users", json={"email": "new@example.com",
                                                  "full_name": "New", "plan": "team"},
                          **authorized(support))
    assert created.status_code == 201, created.get_json()
    assert created.get_json()["plan"] == "team"
    link = mailbox.last_link("new@example.com", "/reset-password")
    token = link.split("token=")[1]
    chosen = client.post("/api/v2/auth/reset-password",
                         json={"token": token, "new_password": "a brand new passphrase"})
    assert chosen.status_code == 200, chosen.get_json()
    signed_in = client.post("/api/v2/auth/login", json={"email": "new@example.com",
                                                         "password": "a brand new passphrase"})
    assert signed_in.status_code == 200
    again = client.post(f"{ADMIN}/users", json={"email": "new@example.com"}, **authorized(support))
    assert again.status_code == 409


def test_an_idempotency_key_repeat_answers_the_first_answer_and_acts_once(app, client,
                                                                          support):
    body = {"email": "once@example.com"}
    headers = authorized(support, **{"Idempotency-Key": "webhook-41"})
    first = client.post(f"{ADMIN}/users", json=body, **headers)
    repeat = client.post(f"{ADMIN}/users", json=body, **headers)
    assert first.status_code == repeat.status_code == 201
    assert first.get_json() == repeat.get_json()
    assert repeat.headers["Idempotent-Replayed"] == "true"
    other = client.post(f"{ADMIN}/users", json={"email": "other@example.com"}, **headers)
    assert other.status_code == 422 and other.get_json()["code"] == "idempotency_key_reused"
    with app.app_context():
        created = db.session.scalars(select(AuditEvent).where(
            AuditEvent.event == "account_created")).all()
        assert len(created) == 1


def test_every_call_is_audited_with_the_client_as_the_actor(app, client, user, support):
    client.get(f"{ADMIN}/users/{user.id}", **authorized(support))
    client.post(f"{ADMIN}/users/{user.id}/password-reset", **authorized(support))
    events = client.get(f"{ADMIN}/users/{user.id}/events?include_reads=true",
                        **authorized(support)).get_json()
    kinds = [(e["event"], e["actor"]) for e in events["events"]]
    assert ("admin_api:show_user", "client:support") in kinds
    assert ("password_reset_sent_by_operator", "client:support") in kinds
    assert kinds.index(("admin_api:send_password_reset", "client:support")) \
        < kinds.index(("admin_api:show_user", "client:support"))  # newest first


def test_end_sessions_and_clear_factors(client, user, login, support):
    tokens = login(user)
    ended = client.delete(f"{ADMIN}/users/{user.id}/sessions", **authorized(support))
    assert ended.get_json() == {"sessions_ended": 1}
    assert client.get("/api/v2/auth/verify", headers={
        "Authorization": f"Bearer {tokens['access_token']}"}).status_code == 401
    assert client.delete(f"{ADMIN}/users/{user.id}/factors",
                         **authorized(support)).status_code == 204


def test_pages_of_users_neither_repeat_nor_miss_while_accounts_are_created(app, client,
                                                                         support):
    from app.domain.accounts import accounts
    with app.app_context():
        for n in range(250):
            accounts.create_user(f"user{n:03}@example.com", None)
        before = set(db.session.scalars(select(User.id)))
    seen: list[str] = []
    cursor = None
    while True:
        query = {"limit": "100", **({"cursor": cursor} if cursor else {})}
        page = client.get(f"{ADMIN}/users", query_string=query, **authorized(support)).get_json()
        seen += [u["id"] for u in page["users"]]
        with app.app_context():
            accounts.create_user(f"during{len(seen)}@example.com", None)
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert len(seen) == len(set(seen))
    assert before <= set(seen)


@pytest.mark.parametrize("query", [
    {"limit": "0"}, {"limit": "101"}, {"limit": "x"}, {"cursor": "garbage"},
    {"cursor": "WzEsMl0"}, {"status": "gone"}, {"created_after": "yesterday"},
    {"email": "a\x00b"}, {"unknown": "1"}, {"limit": "9" * 400},
])
def test_bad_queries_are_422_problems(client, support, query):
    answer = client.get(f"{ADMIN}/users", query_string=query, **authorized(support))
    assert answer.status_code == 422, answer.get_json()
    assert answer.mimetype == "application/problem+json"


@pytest.mark.parametrize("body", [
    {}, {"plan": 5}, {"plan": "Pro Plan"}, {"plan": "x" * 33}, {"full_name": "a\x00"},
    {"plan": "pro", "role": "admin"}, {"full_name": "x" * 201}, [], "pro",
])
def test_bad_bodies_are_422_problems_and_change_nothing(app, client, user, support, body):
    answer = client.patch(f"{ADMIN}/users/{user.id}", json=body, **authorized(support))
    assert answer.status_code == 422, answer.get_json()
    with app.app_context():
        assert db.session.get(User, user.id).plan == "free"


def test_search_by_email_prefix_plan_and_status(app, client, make_user, support):
    make_user("ada@example.com")
    make_user("adam@example.com", plan="pro")
    make_user("bob@example.com")
    found = client.get(f"{ADMIN}/users", query_string={"email": "ada"},
                       **authorized(support)).get_json()
    assert sorted(u["email"] for u in found["users"]) == ["ada@example.com", "adam@example.com"]
    pro = client.get(f"{ADMIN}/users", query_string={"plan": "pro"},
                     **authorized(support)).get_json()
    assert [u["email"] for u in pro["users"]] == ["adam@example.com"]
    wildcard = client.get(f"{ADMIN}/users", query_string={"email": "%"},
                          **authorized(support)).get_json()
    assert wildcard["users"] == []


@pytest.mark.parametrize("cursor", ["WyJub3QgYSBkYXRlIiwiYSJd",  # ["not a date","a"]
                                    "WzEsMl0", "WyIyMDI2LTAxLTAxIiwiYSJd",  # a naive date
                                    "bm90IGpzb24", "W10", "!!!",
                                    # ["2026-01-01T00:00:00+00:00","a\u0000b"]: a NUL for
                                    # PostgreSQL, which cannot compare one
                                    "WyIyMDI2LTAxLTAxVDAwOjAwOjAwKzAwOjAwIiwiYVx1MDAwMGIiXQ"])
def test_a_forged_cursor_is_a_422_never_a_500(client, support, cursor):
    answer = client.get(f"{ADMIN}/users", query_string={"cursor": cursor}, **authorized(support))
    assert answer.status_code == 422, answer.get_json()


def test_a_forged_events_cursor_beyond_64_bits_is_a_422(client, user, support):
    import base64
    cursor = base64.urlsafe_b64encode(b"[99999999999999999999999]").decode().rstrip("=")
    answer = client.get(f"{ADMIN}/users/{user.id}/events", query_string={"cursor": cursor},
                        **authorized(support))
    assert answer.status_code == 422


def test_support_closes_an_account_as_its_owner_would(app, client, user, login, support,
                                                      mailbox):
    tokens = login(user)
    closed = client.delete(f"{ADMIN}/users/{user.id}", **authorized(support))
    assert closed.status_code == 202 and closed.get_json()["erase_after"]
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": tokens["refresh_token"]}).status_code == 401
    assert mailbox.last_link(user.email, "/account/restore")
    enable = client.post(f"{ADMIN}/users/{user.id}/enable", **authorized(support))
    assert enable.status_code == 409 and enable.get_json()["code"] == "deletion_scheduled"


def test_the_delivery_log_lists_and_retries_through_the_admin_api(app, client, support,
                                                                 billing):
    from datetime import timedelta

    from app.domain.clock import now
    from app.models import Delivery
    with app.app_context():
        later = now() + timedelta(hours=1)
        db.session.add(Delivery(event_id="evt_x", site="ledger", sid="", kind="webhook",
                                status="failed", attempts=25, next_attempt_at=later,
                                last_error="ConnectError", created_at=now()))
        db.session.commit()
    listed = client.get(f"{ADMIN}/deliveries", query_string={"status": "failed"},
                        **authorized(support)).get_json()["deliveries"]
    assert [(d["event_id"], d["status"], d["attempts"]) for d in listed] == [
        ("evt_x", "failed", 25)]
    assert client.get(f"{ADMIN}/deliveries", **authorized(billing)).status_code == 403
    assert client.get(f"{ADMIN}/deliveries", query_string={"status": "lost"},
                      **authorized(support)).status_code == 422
    retried = client.post(f"{ADMIN}/deliveries/retry", json={"failed": True, "site": "ledger"},
                          **authorized(support))
    assert retried.get_json() == {"due": 1}


def test_an_id_token_and_a_third_party_clients_token_get_401(client, user, support):
    from tests.support.oidc import authorize_query, get_code, pkce, redeem
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    issued = redeem(client, code, verifier).get_json()
    for untrusted in (issued["id_token"], issued["access_token"]):
        answer = client.get(f"{ADMIN}/users", **authorized(untrusted))
        assert answer.status_code == 401, answer.get_json()
    assert client.get(f"{ADMIN}/users", **authorized(support)).status_code == 200


@pytest.mark.parametrize("path", ["/users/a%00b", "/users/a%00b/events", "/users/x" + "f" * 40])
def test_a_hostile_user_id_is_a_404_problem(client, support, path):
    answer = client.get(f"{ADMIN}{path}", **authorized(support))
    assert answer.status_code == 404 and answer.mimetype == "application/problem+json"


def test_a_hostile_client_id_at_the_token_endpoint_is_no_500(client):
    answer = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                         auth=("bad\x00name", "secret"))
    assert answer.status_code == 401
