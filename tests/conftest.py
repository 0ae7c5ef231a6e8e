"""Fixtures built on the app factory: a fresh database (SQLite, PostgreSQL or each in turn:
tests/support/databases.py), a fast hasher, a clock tests move, and an outbox that keeps mail in
memory (their helpers: tests/support/apps.py)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.domain.accounts import accounts
from app.extensions import db
from tests.support import databases
from tests.support.accounts import PASSWORD, Account
from tests.support.apps import FakeClock, Mailbox, build_app, dispose_app
from tests.support.contract import FUZZ_SUMMARY

if TYPE_CHECKING:  # imported by pytest as a plugin (below), not here: its asserts are rewritten
    from tests.support.postgres import PostgresServer

# Throwaway PostgreSQL and Redis servers, started on first use by the tests that need them; the
# fixtures every test may use (a webhook receiver, the captcha stand-in, a restarted app, a
# signed-in browser).
pytest_plugins = ["tests.support.postgres", "tests.support.redis", "tests.support.events",
                  "tests.support.captcha_fixtures", "tests.support.fixtures",
                  "tests.support.passkey_first"]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Overrides for this test's app; a test or a module may extend it before `app` is built. A
    module marked `app_settings("oidc")` starts from that subject's (tests/support/fixtures.py)."""
    from tests.support.fixtures import subject_settings  # a plugin: imported by pytest first

    marker = request.node.get_closest_marker("app_settings")
    return subject_settings(marker.args[0], request) if marker else {}


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` by tests/support/scheduling.py's groups (`make test`)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from tests.support.scheduling import GroupScheduling

    return GroupScheduling(config, log)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How many cases the contract fuzzers ran, and how long the tests took on each database
    (`make test` runs both in one session): from the reports, which reach the main process."""
    fuzzed = [str(value) for reports in terminalreporter.stats.values() for report in reports
              if getattr(report, "when", None) == "call"
              for name, value in getattr(report, "user_properties", ()) if name == FUZZ_SUMMARY]
    for title, lines in (("contract fuzzing", fuzzed),
                         ("time by database (summed over the workers)",
                          databases.summary(terminalreporter.stats))):
        if lines:
            terminalreporter.section(title)
            for line in lines:
                terminalreporter.write_line(line)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test on a database runs on each kind the run names for it (see `database`)."""
    if "database" in metafunc.fixturenames:
        kinds = databases.kinds_for(metafunc.definition.nodeid)
        if len(kinds) > 1:
            metafunc.parametrize("database", kinds)


@pytest.fixture
def database(request: pytest.FixtureRequest) -> str:
    """`sqlite` or `postgresql` (SVC_TEST_DATABASE); parametrized when the run has both."""
    return databases.kinds_for(request.node.nodeid)[0]


@pytest.fixture(scope="session")
def sqlite_template() -> Iterator[Path]:
    """A SQLite file holding the models' tables, copied for each test."""
    folder = Path(tempfile.mkdtemp(prefix="svc-schema-"))  # not pytest's: see sqlite_server.py
    try:
        databases.build_schema(folder, f"sqlite:///{folder}/{databases.SQLITE_FILE}")
        yield folder / databases.SQLITE_FILE
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_database(postgres_server: PostgresServer) -> Iterator[databases.ReusedDatabase]:
    """The PostgreSQL database that the tests of this session use one after the other."""
    folder = Path(tempfile.mkdtemp(prefix="svc-schema-"))
    try:
        databases.build_schema(folder, postgres_server.create_database("t_reused"))
        yield databases.ReusedDatabase(postgres_server, "t_reused")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def database_url(database: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of this test's alone that holds the models' tables and nothing else."""
    databases.record(request.node, database)
    if database == "postgresql":
        reused = request.getfixturevalue("postgres_database")
        try:
            yield reused.url
        finally:
            reused.renew()
    else:
        # A file, not :memory:, so that the outbox's thread gets a connection of its own.
        yield databases.sqlite_copy(request.getfixturevalue("sqlite_template"), tmp_path)


@pytest.fixture
def empty_database_url(database: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A database of this test's own with no table in it (for the migrations)."""
    databases.record(request.node, database)
    if database == "postgresql":
        return str(request.getfixturevalue("fresh_postgres_url"))
    return f"sqlite:///{tmp_path}/empty.db"


@pytest.fixture
def app(tmp_path: Any, clock: FakeClock, settings: dict[str, Any],
        database_url: str) -> Iterator[Flask]:
    app = build_app(tmp_path / "instance", clock, settings, database_url)
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
