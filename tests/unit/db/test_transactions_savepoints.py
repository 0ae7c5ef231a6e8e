"""A refusal inside a unit of work rolls back to a savepoint, never the unit: what a joined caller
wrote before it stays (issue 22, "no rollback inside a joined unit")."""

from __future__ import annotations

from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.db.rows import add_unless_taken
from app.db.transactions import writes
from app.domain.clock import now
from app.domain.sessions import sessions
from app.extensions import db
from app.models import RefreshToken, User


def new_user(email: str) -> User:
    return User(email=email, email_key=email, full_name="", plan="free", created_at=now())


def test_a_taken_row_leaves_the_callers_writes(app: Flask, user: Any) -> None:
    @writes
    def both() -> bool:
        db.session.add(new_user("first@example.com"))
        return add_unless_taken(new_user(user.email))  # the fixture's user has it

    with app.app_context():
        assert both() is False
        assert db.session.scalar(select(func.count()).where(
            User.email == "first@example.com")) == 1


def test_a_refresh_that_lost_the_race_undoes_only_its_own_attempt(
        client: FlaskClient, user: Any, login: Any, app: Flask, monkeypatch: Any) -> None:
    first = login(user)
    real, calls = sessions.claim_once, []

    def losing_once(*args: Any, **kwargs: Any) -> bool:
        calls.append(1)
        return len(calls) > 1 and real(*args, **kwargs)

    monkeypatch.setattr(sessions, "claim_once", losing_once)
    response = client.post("/api/v2/auth/refresh", json={"refresh_token": first["refresh_token"]})
    assert response.status_code == 200, response.get_json()
    assert len(calls) == 2
    with app.app_context():  # the token and its one successor: the lost attempt's is gone
        assert db.session.scalar(select(func.count()).select_from(RefreshToken)) == 2
