"""Refresh: rotation, the reuse grace window, reuse detection, idle and absolute lifetimes."""

import pytest
from sqlalchemy import create_engine, update

from app.domain.sessions import sessions
from app.extensions import db
from app.models import AuthSession
from tests.support.http import bearer

DAY = 24 * 3600


def refresh(client, token, path="/api/v2/auth/refresh"):
    return client.post(path, json={"refresh_token": token})


def verify(client, access_token):
    return client.get("/api/v2/auth/verify", headers=bearer(access_token))


def test_refresh_rotates_the_refresh_token(client, user, login):
    first = login(user)
    response = refresh(client, first["refresh_token"])
    assert response.status_code == 200
    body = response.get_json()
    assert body["refresh_token"] != first["refresh_token"]
    assert body["user"]["id"] == user.id
    assert response.headers["Cache-Control"] == "no-store"
    assert verify(client, body["access_token"]).status_code == 200


def test_v1_refresh_answers_the_v1_shape(client, user, login):
    response = refresh(client, login(user)["refresh_token"], "/api/v1/auth/refresh")
    assert response.status_code == 200
    assert set(response.get_json()) == {"access_token", "refresh_token", "token_type",
                                        "expires_in"}


def test_tokens_from_either_version_work_on_both(client, user):
    v1 = client.post("/api/v1/auth/login", json={"email": user.email, "password": user.password,
                                                 "captcha_token": ""}).get_json()
    v2 = refresh(client, v1["refresh_token"], "/api/v2/auth/refresh").get_json()
    v1_again = refresh(client, v2["refresh_token"], "/api/v1/auth/refresh").get_json()
    assert verify(client, v1_again["access_token"]).status_code == 200


def test_a_rotated_token_within_the_grace_window_gets_the_same_successor(
        client, user, login, clock):
    """Two tabs refreshing at once must not sign each other out."""
    r1 = login(user)["refresh_token"]
    first = refresh(client, r1).get_json()
    clock.advance(9)
    second = refresh(client, r1)
    assert second.status_code == 200
    assert second.get_json()["refresh_token"] == first["refresh_token"]
    assert refresh(client, first["refresh_token"]).status_code == 200


def test_reuse_after_the_grace_window_revokes_the_whole_session(client, user, login, clock):
    r1 = login(user)["refresh_token"]
    r2 = refresh(client, r1).get_json()
    r3 = refresh(client, r2["refresh_token"]).get_json()
    clock.advance(11)
    replay = refresh(client, r1)
    assert replay.status_code == 401
    assert replay.get_json()["code"] == "invalid_token"
    assert refresh(client, r3["refresh_token"]).status_code == 401
    assert verify(client, r3["access_token"]).get_json()["code"] == "session_revoked"


def test_reuse_detection_is_audited(app, client, user, login, clock):
    from sqlalchemy import select

    from app.extensions import db
    from app.models import AuditEvent

    r1 = login(user)["refresh_token"]
    refresh(client, r1)
    clock.advance(60)
    refresh(client, r1)
    with app.app_context():
        events = db.session.scalars(select(AuditEvent.event)).all()
    assert "refresh_token_reused" in events


def test_reuse_does_not_touch_other_sessions(client, user, login, clock):
    stolen, other = login(user), login(user)
    refresh(client, stolen["refresh_token"])
    clock.advance(60)
    refresh(client, stolen["refresh_token"])
    assert refresh(client, other["refresh_token"]).status_code == 200


def test_an_unused_refresh_token_expires_after_the_idle_lifetime(client, user, login, clock):
    token = login(user)["refresh_token"]
    clock.advance(30 * DAY + 1)
    assert refresh(client, token).status_code == 401


def test_a_used_session_expires_at_the_absolute_lifetime(client, user, login, clock):
    token = login(user)["refresh_token"]
    for _ in range(3):  # 87 days of regular use keeps the session alive...
        clock.advance(29 * DAY)
        response = refresh(client, token)
        assert response.status_code == 200
        token = response.get_json()["refresh_token"]
    clock.advance(3 * DAY + 1)  # ...but not past 90 days from sign-in
    assert refresh(client, token).status_code == 401


@pytest.mark.parametrize("token", ["", "x", "not-a-real-token" * 4])
def test_unknown_refresh_tokens_are_refused(client, user, token):
    response = refresh(client, token)
    assert response.status_code in (401, 422)
    assert response.mimetype == "application/problem+json"


def test_an_access_token_is_not_a_refresh_token(client, user, login):
    access = login(user)["access_token"]
    response = refresh(client, access)
    assert response.status_code in (401, 422)
    assert "access_token" not in response.get_json()


def test_refresh_tokens_are_stored_only_as_hashes(app, user, login):
    from sqlalchemy import select

    from app.extensions import db
    from app.models import RefreshToken

    token = login(user)["refresh_token"]
    with app.app_context():
        stored = db.session.scalars(select(RefreshToken.token_hash)).all()
    assert token not in stored and all(len(h) == 64 for h in stored)


def test_refresh_tokens_are_long_and_unique(client, user, login):
    tokens = {login(user)["refresh_token"] for _ in range(50)}
    assert len(tokens) == 50
    assert all(len(t) >= 43 for t in tokens)  # 256 bits, base64url


def test_a_disabled_account_cannot_refresh_or_verify(app, client, user, login):
    body = login(user)
    result = app.test_cli_runner().invoke(args=["users", "disable", user.email])
    assert result.exit_code == 0, result.output
    assert refresh(client, body["refresh_token"]).status_code == 401
    assert verify(client, body["access_token"]).status_code == 401


def _log_out_elsewhere(session_id):
    """Revoke a session as a concurrent logout would, committed before the caller goes on.

    On PostgreSQL through a connection of its own. On SQLite, inside the refresh's own
    transaction: its IMMEDIATE transaction holds the write lock from its first read, so another
    connection would only wait for it; what the refresh then reads is the same either way.
    """
    revoke = (update(AuthSession).where(AuthSession.id == session_id)
              .values(revoked_at=AuthSession.created_at, revoke_reason="logout"))
    if db.engine.dialect.name == "sqlite":
        db.session.execute(revoke.execution_options(synchronize_session=False))
        return
    elsewhere = create_engine(db.engine.url)
    try:
        with elsewhere.begin() as connection:
            connection.execute(revoke)
    finally:
        elsewhere.dispose()


def test_a_refresh_racing_a_logout_of_its_session_hands_out_no_tokens(
        client, user, login, monkeypatch):
    """The logout commits after the refresh has read the session and before it rotates."""
    body = login(user)
    rotate = sessions._rotate

    def logout_lands_in_between(row, *args):
        _log_out_elsewhere(row.session_id)
        return rotate(row, *args)

    monkeypatch.setattr(sessions, "_rotate", logout_lands_in_between)
    raced = refresh(client, body["refresh_token"])
    monkeypatch.undo()

    assert raced.status_code == 401, raced.get_json()
    assert raced.get_json()["code"] == "invalid_token"
    assert "access_token" not in raced.get_json()


@pytest.mark.parametrize("settings", [{"ACCESS_TOKEN_TTL": 5}])
def test_a_developer_sees_refresh_work_within_seconds(client, user, login, clock, settings):
    body = login(user)
    assert body["expires_in"] == 5
    clock.advance(5 + 5 + 1)  # the lifetime and the 5 s of leeway
    expired = verify(client, body["access_token"])
    assert expired.status_code == 401 and expired.get_json()["code"] == "token_expired"
    renewed = refresh(client, body["refresh_token"]).get_json()
    assert verify(client, renewed["access_token"]).status_code == 200
