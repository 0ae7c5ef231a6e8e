"""The audit trail: who did what, from where; never a password or a token."""

from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent
from tests.support.http import bearer


def events(app):
    with app.app_context():
        return db.session.scalars(select(AuditEvent).order_by(AuditEvent.id)).all()


def test_the_lifecycle_is_recorded_with_time_user_ip_and_agent(app, client, clock, mailbox):
    environ = {"REMOTE_ADDR": "10.1.1.1", "HTTP_USER_AGENT": "Tests/1.0\x1b[31m\x00red"}
    body = client.post("/api/v2/auth/signup", environ_base=environ,
                       json={"email": "eve@example.com", "password": "a long enough passphrase"}
                       ).get_json()
    client.post("/api/v2/auth/login", json={"email": "eve@example.com", "password": "wrong one!"})
    client.post("/api/v2/auth/refresh", json={"refresh_token": body["refresh_token"]})
    client.post("/api/v2/auth/logout", headers=bearer(body["access_token"]))
    assert mailbox.messages  # the confirmation mail, sent from the outbox, is recorded too
    recorded = [e for e in events(app) if e.event != "confirm_email_sent"]
    assert [e.event for e in recorded] == ["signed_up", "login_succeeded", "login_failed",
                                           "token_refreshed", "logout_local"]
    assert [e.event for e in events(app)].count("confirm_email_sent") == 1
    first = recorded[0]
    assert first.user_id == body["user"]["id"] and first.ip == "10.1.1.1"
    assert first.at == clock.now
    assert first.user_agent == "Tests/1.0[31mred"  # control characters removed


def test_no_secret_reaches_the_audit_table(app, client, user):
    body = client.post("/api/v2/auth/login",
                       json={"email": user.email, "password": user.password}).get_json()
    client.post("/api/v2/auth/refresh", json={"refresh_token": body["refresh_token"]})
    stored = " ".join(str(vars(e)) for e in events(app))
    for secret in (user.password, body["access_token"], body["refresh_token"]):
        assert secret not in stored
