"""The bearer lookup's statement run straight on the driver (app/domain/driver_query.py):
the same values SQLAlchemy would give, the latest commits, no transaction left open, and a
connection that breaks or is disposed replaced without the caller noticing."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import bindparam, create_engine, select, text
from sqlalchemy.exc import OperationalError

from app.db.driver_query import DriverQuery
from app.extensions import db
from app.models import User
from app.models.types import UTCDateTime

CREATED_SINCE = (
    select(User.email, User.email_verified, User.created_at)
    .where(User.id == bindparam("user_id"),
           User.created_at > bindparam("since", type_=UTCDateTime()))
)


@pytest.fixture
def query(app: Flask) -> Any:
    with app.app_context():
        yield DriverQuery(CREATED_SINCE, db.engine)


def test_values_come_back_typed_as_the_orm_gives_them(app: Flask, user: Any, query: Any) -> None:
    with app.app_context():
        created = db.session.get(User, user.id).created_at
        email, verified, created_at = query.first(user_id=user.id,
                                                  since=created - timedelta(seconds=1))
    assert (email, verified, created_at) == (user.email, False, created)
    assert created_at.tzinfo == UTC and type(verified) is bool


def test_parameters_are_bound_with_the_column_types(app: Flask, user: Any, query: Any) -> None:
    with app.app_context():
        created = db.session.get(User, user.id).created_at
        assert query.first(user_id=user.id, since=created) is None  # strictly after
        assert query.first(user_id="' OR 1=1 --", since=created - timedelta(days=1)) is None


def test_each_run_sees_the_latest_commit(app: Flask, user: Any, query: Any) -> None:
    since = datetime(2000, 1, 1, tzinfo=UTC)
    with app.app_context():
        assert query.first(user_id=user.id, since=since)[1] is False
        db.session.get(User, user.id).email_verified = True
        db.session.commit()
        assert query.first(user_id=user.id, since=since)[1] is True


def test_no_transaction_is_left_open(app: Flask, user: Any, query: Any) -> None:
    with app.app_context():
        query.first(user_id=user.id, since=datetime(2000, 1, 1, tzinfo=UTC))
        if db.engine.dialect.name == "postgresql":
            with db.engine.connect() as connection:
                idle_in_transaction = connection.scalar(text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND state LIKE 'idle in transaction%'"))
            assert idle_in_transaction == 0
        else:
            # A reader's open snapshot would keep a truncating checkpoint from finishing.
            with db.engine.connect() as connection:
                busy, _, _ = connection.exec_driver_sql(
                    "PRAGMA wal_checkpoint(TRUNCATE)").one()
            assert busy == 0


def test_a_broken_connection_is_replaced_on_the_same_call(app: Flask, user: Any,
                                                          query: Any) -> None:
    since = datetime(2000, 1, 1, tzinfo=UTC)
    with app.app_context():
        query.first(user_id=user.id, since=since)
        query._local.held.driver.close()  # as a server restart or a network cut leaves it
        assert query.first(user_id=user.id, since=since)[0] == user.email


def test_dispose_closes_the_held_connections(app: Flask, user: Any, query: Any) -> None:
    since = datetime(2000, 1, 1, tzinfo=UTC)
    with app.app_context():
        query.first(user_id=user.id, since=since)
        held = query._local.held
        db.engine.dispose()
        assert not held.discard.alive
        assert query.first(user_id=user.id, since=since)[0] == user.email
        assert query._local.held is not held


def test_a_thread_s_connection_closes_when_the_thread_ends(app: Flask, user: Any,
                                                           query: Any) -> None:
    seen: list[Any] = []

    def look_up() -> None:
        with app.app_context():
            query.first(user_id=user.id, since=datetime(2000, 1, 1, tzinfo=UTC))
            seen.append(query._local.held.discard)

    thread = threading.Thread(target=look_up)
    thread.start()
    thread.join()
    assert seen and not seen[0].alive


def test_an_unreachable_database_raises_sqlalchemy_s_operational_error(tmp_path: Any) -> None:
    engine = create_engine(f"sqlite:///{tmp_path}/missing-folder/svc.db")
    with pytest.raises(OperationalError):
        DriverQuery(CREATED_SINCE, engine).first(user_id="x", since=datetime.now(UTC))
