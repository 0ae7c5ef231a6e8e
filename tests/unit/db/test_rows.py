"""Rows written with a plain INSERT (app/domain/rows.py) behave as rows the ORM wrote."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from sqlalchemy import event, func, select

from app.db.rows import insert_loaded, insert_values
from app.extensions import db
from app.models import AuditEvent, AuthSession, User
from app.models.types import new_id


def new_session(user: User) -> AuthSession:
    at = datetime.now(UTC)
    return insert_loaded(AuthSession, {
        "id": new_id(), "user_id": user.id, "provider": "password", "created_at": at,
        "last_used_at": at, "expires_at": at + timedelta(days=1), "revoked_at": None,
        "revoke_reason": None, "ip": None, "user_agent": None,
    }, user=user)


def test_an_inserted_row_is_a_loaded_instance_needing_no_query(app: Flask, user: Any) -> None:
    with app.app_context():
        owner = db.session.get(User, user.id)
        statements: list[str] = []
        event.listen(db.engine, "before_cursor_execute",
                     lambda *args: statements.append(args[2]))
        session = new_session(owner)
        assert db.session.get(AuthSession, session.id) is session
        assert (session.user, session.revoked_at, session.provider) == (owner, None, "password")
        assert len(statements) == 1 and statements[0].startswith("INSERT INTO sessions")


def test_changes_to_it_are_flushed_and_the_row_dies_with_a_rollback(app: Flask,
                                                                     user: Any) -> None:
    with app.app_context():
        session = new_session(db.session.get(User, user.id))
        session.revoke_reason = "testing"
        db.session.commit()
        assert db.session.scalar(select(AuthSession.revoke_reason).where(
            AuthSession.id == session.id)) == "testing"

        doomed = new_session(db.session.get(User, user.id)).id
        insert_values(AuditEvent, at=datetime.now(UTC), event="login_succeeded",
                      user_id=user.id, session_id=doomed, ip=None, user_agent=None)
        db.session.rollback()
        assert db.session.scalar(select(func.count()).select_from(AuthSession).where(
            AuthSession.id == doomed)) == 0
        assert db.session.scalar(select(func.count()).select_from(AuditEvent).where(
            AuditEvent.session_id == doomed)) == 0
