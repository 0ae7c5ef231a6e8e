"""Fixtures built on the app factory: a fresh SQLite database, a fast hasher, a clock tests move,
and an outbox that keeps mail in memory (their helpers: tests/support/apps.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.domain.accounts import accounts
from app.extensions import db
from tests.support.accounts import PASSWORD, Account
from tests.support.apps import FakeClock, Mailbox, build_app, dispose_app

# Throwaway PostgreSQL and Redis servers, started on first use by the tests that need them.
pytest_plugins = ["tests.infra.postgres", "tests.infra.redis"]


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


@pytest.fixture
def mailbox(app: Flask) -> Mailbox:
    return Mailbox(app)
