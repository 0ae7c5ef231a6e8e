"""flask users / keys / sessions commands."""

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuthSession, FailureCounter, User


def run(app, *args, input=None):
    return app.test_cli_runner().invoke(args=list(args), input=input)


def test_users_create_then_login(app, client):
    result = run(app, "users", "create", "op@example.com", "--password",
                 "a long enough passphrase", "--name", "Operator", "--plan", "pro")
    assert result.exit_code == 0, result.output
    body = client.post("/api/v2/auth/login", json={"email": "op@example.com",
                                                   "password": "a long enough passphrase"})
    assert body.get_json()["user"] | {"id": None} == {
        "id": None, "email": "op@example.com", "full_name": "Operator", "plan": "pro",
        "email_verified": False}


def test_users_create_prompts_for_the_password(app):
    result = run(app, "users", "create", "op@example.com",
                 input="a long enough passphrase\na long enough passphrase\n")
    assert result.exit_code == 0, result.output
    assert "a long enough passphrase" not in result.output


def test_users_create_applies_the_policy_and_refuses_duplicates(app, user):
    weak = run(app, "users", "create", "x@example.com", "--password", "password")
    assert weak.exit_code != 0 and "common" in weak.output
    taken = run(app, "users", "create", user.email.upper(), "--password", "another passphrase")
    assert taken.exit_code != 0 and "already exists" in taken.output


def test_users_set_plan_shows_in_the_next_token(app, client, user, login):
    assert run(app, "users", "set-plan", user.email, "pro").exit_code == 0
    assert login(user)["user"]["plan"] == "pro"


def test_unknown_users_are_a_clear_error(app):
    result = run(app, "users", "set-plan", "ghost@example.com", "pro")
    assert result.exit_code != 0 and "No account" in result.output
    assert "Traceback" not in result.output


def test_users_disable_refuses_login(app, client, user):
    assert run(app, "users", "disable", user.email).exit_code == 0
    response = client.post("/api/v2/auth/login",
                           json={"email": user.email, "password": user.password})
    assert response.status_code == 401


def test_sessions_purge_expired_deletes_only_ended_sessions(app, client, user, login, clock):
    ended, live = login(user), login(user)
    client.post("/api/v2/auth/logout", headers={"Authorization": f"Bearer {ended['access_token']}"})
    clock.advance(2 * 24 * 3600)
    result = run(app, "sessions", "purge-expired")
    assert result.exit_code == 0 and "Deleted 1" in result.output
    with app.app_context():
        assert len(db.session.scalars(select(AuthSession)).all()) == 1
        assert db.session.scalars(select(User)).one().email == user.email
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": live["refresh_token"]}).status_code == 200


class TestFailureCounters:
    @pytest.fixture
    def settings(self):
        return {"RATELIMIT_ENABLED": True}

    def test_purge_expired_also_deletes_failure_counters_of_windows_long_past(self, app, client,
                                                                              clock):
        client.post("/api/v2/auth/login", json={"email": "old@example.com", "password": "guess"})
        clock.advance(3 * 24 * 3600)  # a day past the end of a one-day window
        client.post("/api/v2/auth/login", json={"email": "new@example.com", "password": "guess"})
        result = run(app, "sessions", "purge-expired")
        assert "Deleted 2 failure counters" in result.output  # old@'s, per address and overall
        with app.app_context():
            assert len(db.session.scalars(select(FailureCounter)).all()) == 2
