"""Fixtures built on the app factory: a fresh SQLite database, a fast hasher, a clock tests move,
and an outbox that keeps mail in memory."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app import create_app
from app.domain import accounts
from app.extensions import db

# Throwaway PostgreSQL and Redis servers, started on first use by the tests that need them.
pytest_plugins = ["tests.infra.postgres", "tests.infra.redis"]

PASSWORD = "correct horse battery staple"


class FakeClock:
    """Stands in for the wall clock: `advance()` instead of sleeping."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class ServerLikeClient(FlaskClient):
    """Reads every answer to its end and closes it, as a server does: mail a request scheduled
    starts only then (app/after_response.py)."""

    def open(self, *args: Any, buffered: bool = True, **kwargs: Any) -> Any:
        return super().open(*args, buffered=buffered, **kwargs)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings() -> dict[str, Any]:
    """Overrides for this test's app; a test or a module may extend it before `app` is built."""
    return {}


@pytest.fixture
def database_url(request: pytest.FixtureRequest, tmp_path: Any) -> str:
    """SQLite by default; a fresh PostgreSQL database when SVC_TEST_DATABASE=postgresql
    (`make test` runs the suite both ways)."""
    if os.environ.get("SVC_TEST_DATABASE") == "postgresql":
        return str(request.getfixturevalue("fresh_postgres_url"))
    # A file, not :memory:, so that the outbox's thread gets a connection of its own.
    return f"sqlite:///{tmp_path}/test.db"


def build_app(instance_path: Any, clock: FakeClock, settings: dict[str, Any],
              database_url: str) -> Flask:
    """An app as the `app` fixture builds it; another one on the same database is another
    instance of the service. The caller creates the tables and calls `dispose_app`."""
    app = create_app({
        "INSTANCE_PATH": str(instance_path),
        "SQLALCHEMY_DATABASE_URI": database_url,
        "MAIL_URL": "memory://", "MAIL_RETRY_DELAY": 0.01,
        "SECRET_KEY": "test",
        "CLOCK": clock,
        # A cheap argon2id, so tests run fast; the production parameters have their own test.
        "ARGON2_MEMORY_COST": 64, "ARGON2_TIME_COST": 1, "ARGON2_PARALLELISM": 1,
        "RATELIMIT_ENABLED": False,
        **settings,
    })
    app.test_client_class = ServerLikeClient
    return app


def dispose_app(app: Flask) -> None:
    app.extensions["svc-outbox"].drain()
    app.extensions["svc-outbox"].stop()  # its thread would go on looking at the database
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def app(tmp_path: Any, clock: FakeClock, settings: dict[str, Any],
        database_url: str) -> Iterator[Flask]:
    app = build_app(tmp_path / "instance", clock, settings, database_url)
    with app.app_context():
        db.create_all()
    yield app
    dispose_app(app)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@dataclass
class Account:
    email: str
    password: str
    id: str


@pytest.fixture
def make_user(app: Flask):  # type: ignore[no-untyped-def]
    def make(email: str = "ada@example.com", password: str = PASSWORD, **fields: Any) -> Account:
        with app.app_context():
            user = accounts.create_user(email, password, fields.pop("full_name", "Ada"))
            for name, value in fields.items():
                setattr(user, name, value)
            db.session.commit()
            return Account(email, password, user.id)
    return make


@pytest.fixture
def user(make_user) -> Account:  # type: ignore[no-untyped-def]
    return make_user()


@pytest.fixture
def login(client: FlaskClient):  # type: ignore[no-untyped-def]
    """Log in through v2 and return the response body (tokens and user)."""
    def log_in(account: Account) -> dict[str, Any]:
        response = client.post("/api/v2/auth/login",
                               json={"email": account.email, "password": account.password})
        assert response.status_code == 200, response.get_json()
        body: dict[str, Any] = response.get_json()
        return body
    return log_in


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Mailbox:
    """What the app mailed, once the outbox has finished its work."""

    def __init__(self, app: Flask) -> None:
        self._outbox = app.extensions["svc-outbox"]

    @property
    def messages(self) -> list[Any]:
        assert self._outbox.drain(), "the outbox did not finish in time"
        return list(self._outbox.transport.sent)

    def to(self, address: str) -> list[Any]:
        return [m for m in self.messages if m["To"] == address]

    def last_link(self, address: str, path: str) -> str:
        """The last link to `path` mailed to `address` (from the plain-text part)."""
        import re

        for message in reversed(self.to(address)):
            text = message.get_body(("plain",)).get_content()
            found = re.search(r"(https?://\S+" + re.escape(path) + r"\?token=\S+)", text)
            if found:
                return found.group(1)
        raise AssertionError(f"no {path} link was mailed to {address}")


@pytest.fixture
def mailbox(app: Flask) -> Mailbox:
    return Mailbox(app)
