"""What a third-party client hears of an account (issue 33, finding 2): only what its consent
allows, the same claims its userinfo gives, and of the sessions that ended only its own; a
first-party site hears all of it, as before. Through the doors that change an account: the admin
API, an address change by the API and its mailed link, a sign-out."""

from __future__ import annotations

import pytest
from sqlalchemy import select
from standardwebhooks import Webhook

from app.domain.clock import system_clock
from app.extensions import db
from app.models import AuthSession, ConsentGrant
from tests.support import admin
from tests.support.admin import authorized
from tests.support.apps import drained
from tests.support.events import OUTSIDER_SECRET, SECRET
from tests.support.oidc import authorize_query, get_code, pkce, redeem
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("events")

OUTSIDER_URI = "https://outsider.example/cb"


@pytest.fixture
def settings(receiver):
    sites = {
        "symbols": {"redirect_uris": ["http://127.0.0.1:8001/auth/callback"],
                    "webhook_url": f"{receiver.url}/symbols", "webhook_secret": SECRET},
        "outsider": {"redirect_uris": [OUTSIDER_URI], "origins": [], "first_party": False,
                     "webhook_url": f"{receiver.url}/outsider",
                     "webhook_secret": OUTSIDER_SECRET}}
    return {"WEBHOOK_RETRY_DELAY": 0.05, "PLANS": "free,pro,team", "DEFAULT_PLAN": "free",
            "CLIENT_SITES": sites}


def consent(app, user, scope):
    with app.app_context():
        db.session.add(ConsentGrant(user_id=user.id, client_id="outsider", scope=scope,
                                    granted_at=system_clock()))
        db.session.commit()


def delivered(app, receiver):
    """Every event so far fanned out and delivered: (symbols' events, the outsider's)."""
    outbox = app.extensions["svc-outbox"]
    with app.app_context():
        outbox.lane("events").feed(system_clock())
    drained(outbox)
    found = list(receiver.received)
    return ([Webhook(SECRET).verify(r.body, r.headers) for r in found if r.path == "/symbols"],
            [Webhook(OUTSIDER_SECRET).verify(r.body, r.headers)
             for r in found if r.path == "/outsider"])


def of_type(events, kind):
    return [event["data"] for event in events if event["type"] == kind]


def change_address(client, mailbox, login, user, new_email):
    tokens = login(user)
    asked = client.post("/api/v2/auth/email", json={"new_email": new_email,
                                                    "password": user.password},
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert asked.status_code in (200, 202, 204), asked.get_json()
    token = mailbox.last_link(new_email, "/email-change").split("token=")[1]
    done = submit(client, f"/email-change?token={token}", {"token": token})
    assert done.status_code == 200


def outsider_session(client, user, scope):
    """A session of the outsider's, by the authorization code flow (consent given before)."""
    verifier = pkce()
    query = authorize_query("outsider", OUTSIDER_URI, verifier, scope=scope)
    tokens = redeem(client, get_code(client, user, query), verifier, "outsider",
                    OUTSIDER_URI).get_json()
    return tokens


def test_an_openid_only_client_hears_no_address_name_plan_or_session(
        app, client, user, login, mailbox, receiver):
    consent(app, user, "openid")
    support = admin.token(client, admin.register(app, "support", "users:write", "users:plan"))
    changed = client.patch(f"/api/admin/v1/users/{user.id}",
                           json={"full_name": "Ada Lovelace", "plan": "pro"}, **authorized(support))
    assert changed.status_code == 200, changed.get_json()
    first_party = login(user)
    client.post("/api/v2/auth/logout?scope=global",
                headers={"Authorization": f"Bearer {first_party['access_token']}"})
    change_address(client, mailbox, login, user, "ada@moved.example")
    symbols, outsider = delivered(app, receiver)
    # Userinfo for this consent answers {sub}: the events say no more.
    assert of_type(outsider, "user.updated") == []
    assert of_type(outsider, "sessions.ended") == []
    assert "ada@moved.example" not in repr(outsider) and "Lovelace" not in repr(outsider)
    # A family site still hears all of it.
    assert {"changed": ["full_name", "plan"], "full_name": "Ada Lovelace", "plan": "pro",
            "user_id": user.id} in of_type(symbols, "user.updated")
    assert any(data.get("email") == "ada@moved.example"
               for data in of_type(symbols, "user.updated"))
    with app.app_context():
        every_session = set(db.session.scalars(select(AuthSession.id)))
    told = {sid for data in of_type(symbols, "sessions.ended") for sid in data["session_ids"]}
    assert told and told <= every_session


def test_email_and_profile_consent_hears_those_claims_never_the_plan(
        app, client, user, login, mailbox, receiver):
    consent(app, user, "openid email profile")
    support = admin.token(client, admin.register(app, "support", "users:write", "users:plan"))
    client.patch(f"/api/admin/v1/users/{user.id}", json={"full_name": "Ada L.", "plan": "pro"},
                 **authorized(support))
    client.patch(f"/api/admin/v1/users/{user.id}", json={"plan": "team"}, **authorized(support))
    change_address(client, mailbox, login, user, "ada@moved.example")
    _, outsider = delivered(app, receiver)
    assert of_type(outsider, "user.updated") == [
        {"user_id": user.id, "changed": ["full_name"], "full_name": "Ada L."},
        {"user_id": user.id, "changed": ["email", "email_verified"],
         "email": "ada@moved.example", "email_verified": True}]
    assert "team" not in repr(outsider) and "pro" not in repr(
        [event["data"] for event in outsider])


def test_profile_consent_alone_hears_the_name_not_the_address(app, client, user, login,
                                                              mailbox, receiver):
    consent(app, user, "openid profile")
    support = admin.token(client, admin.register(app, "support", "users:write"))
    client.patch(f"/api/admin/v1/users/{user.id}", json={"full_name": "Ada L."},
                 **authorized(support))
    change_address(client, mailbox, login, user, "ada@moved.example")
    _, outsider = delivered(app, receiver)
    assert of_type(outsider, "user.updated") == [
        {"user_id": user.id, "changed": ["full_name"], "full_name": "Ada L."}]


def test_a_client_hears_of_its_own_sessions_ending_never_of_another(app, client, user, login,
                                                                   receiver):
    consent(app, user, "openid")
    own = outsider_session(client, user, "openid")
    first_party = login(user)
    client.post("/api/v2/auth/logout?scope=global",
                headers={"Authorization": f"Bearer {first_party['access_token']}"})
    symbols, outsider = delivered(app, receiver)
    import jwt
    own_sid = jwt.decode(own["access_token"], options={"verify_signature": False})["sid"]
    ended = of_type(outsider, "sessions.ended")
    assert ended == [{"user_id": user.id, "reason": "logout", "session_ids": [own_sid]}]
    everything = {sid for data in of_type(symbols, "sessions.ended")
                  for sid in data["session_ids"]}
    assert own_sid in everything and len(everything) > 1  # the family site hears them all


def test_the_cli_and_the_hosted_pages_tell_an_openid_only_client_no_more(app, client, user,
                                                                         receiver):
    consent(app, user, "openid")
    runner = app.test_cli_runner()
    assert runner.invoke(args=["users", "set-plan", user.email, "pro"]).exit_code == 0
    assert runner.invoke(args=["users", "disable", user.email]).exit_code == 0
    assert runner.invoke(args=["users", "enable", user.email]).exit_code == 0
    submit(client, "/login", {"email": user.email, "password": user.password})
    signed_out = submit(client, "/logout", {}, token_from="/account")  # the hosted sign-out
    assert signed_out.status_code == 302
    symbols, outsider = delivered(app, receiver)
    # (user.created too, when the consent was there before its fan-out: the account's id only)
    assert [event["type"] for event in outsider if event["type"] != "user.created"] == [
        "user.disabled", "user.enabled"]
    assert all(event["data"] == {"user_id": user.id} for event in outsider)
    assert {"changed": ["plan"], "plan": "pro", "user_id": user.id} in of_type(symbols,
                                                                             "user.updated")
    assert of_type(symbols, "sessions.ended")  # the family site hears of it
