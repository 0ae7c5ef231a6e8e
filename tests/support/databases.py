"""Which database each test runs on, and its own fresh copy of the schema.

SVC_TEST_DATABASE names the kinds a run uses: `sqlite` (the default), `postgresql`, or both,
comma-separated, as `make test` runs them in one session. With both, every app-factory test of
POSTGRES_SUITE runs once on each (its id ends in `[sqlite]` or `[postgresql]`) and every other test
on SQLite alone; a test that does not use a database runs once.

A test's database holds the models' tables from the start, made once a session (once per
pytest-xdist worker) rather than for every test, which used to cost more than most tests: on
SQLite a copy of a template file; on PostgreSQL one database that the worker's tests use in turn,
renamed and emptied after each (`ReusedDatabase`), where a new database per test cost a quarter
of a second of checkpoints and file copies.
"""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
from psycopg import sql

from app.extensions import db
from tests.support.apps import FakeClock, build_app, dispose_app

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer

KINDS = ("sqlite", "postgresql")

# The tests that `make test` runs on PostgreSQL too (node id prefixes): the app-factory tests of
# tests/unit and the top-level modules, but for SQLITE_ONLY.
POSTGRES_SUITE = ("tests/unit/", "tests/test_")
# The console's and the events' tests (the support console's pages, webhooks to client sites) run
# on SQLite alone, as they did before the suite mirrored app/ (a new test of theirs runs on both).
SQLITE_ONLY = tuple(f"tests/unit/{path}" for path in (
    "console/test_views.py", "console/test_views_audit_trail.py",
    "console/test_views_database_restart.py", "domain/oidc/test_backchannel.py",
    "domain/clients/test_webhooks_client_site.py", "domain/test_events_consented_bodies.py",
    "domain/clients/test_endpoints.py", "domain/test_events_erasure.py",
    "domain/clients/test_registration.py", "domain/clients/test_webhooks.py"))

SQLITE_FILE = "test.db"

# The user property of a test's report that names its database: a report reaches the main process
# from a pytest-xdist worker, and the summary at the end of the run counts by it.
PROPERTY = "database"


def selected_kinds() -> tuple[str, ...]:
    """The kinds SVC_TEST_DATABASE names, in the order of KINDS."""
    named = {kind.strip() for kind in os.environ.get("SVC_TEST_DATABASE", "sqlite").split(",")}
    unknown = named - set(KINDS) - {""}
    if unknown:
        raise ValueError(f"SVC_TEST_DATABASE: unknown {sorted(unknown)}; choose from {KINDS}")
    return tuple(kind for kind in KINDS if kind in named) or ("sqlite",)


def kinds_for(nodeid: str) -> tuple[str, ...]:
    """The kinds the test `nodeid` runs on: one unless the run has several and it is in
    POSTGRES_SUITE."""
    kinds = selected_kinds()
    if len(kinds) > 1 and (not nodeid.startswith(POSTGRES_SUITE)
                           or nodeid.startswith(SQLITE_ONLY)):
        return ("sqlite",)
    return kinds


def build_schema(directory: Path, url: str) -> None:
    """Creates the models' tables in the empty database `url`, through an app as the tests
    build it (its instance folder in `directory`)."""
    app = build_app(directory / "instance", FakeClock(), {}, url)
    with app.app_context():
        db.create_all()
    dispose_app(app)


def sqlite_copy(template: Path, directory: Path) -> str:
    """The URL of a copy of the SQLite `template` in `directory`."""
    target = directory / SQLITE_FILE
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"


class ReusedDatabase:
    """A PostgreSQL database with the models' tables that a worker's tests use one after the
    other. After each test, `renew()` ends every connection to it and renames it, so an address
    the test kept (a thread it left running, an engine it did not dispose of) reaches nothing, as
    if the database had been dropped; then deletes every row, restarts the sequences and makes
    sure no table holds a row before the next test."""

    RENAME_ATTEMPTS = 50  # an ended connection takes a moment to go
    VACUUM_EVERY = 100  # autovacuum is off (tests/support/postgres.py): deleted rows pile up

    def __init__(self, server: PostgresServer, name: str) -> None:
        self.server, self.name, self.renewals = server, name, 0

    @property
    def url(self) -> str:
        return self.server.url(self.name)

    def renew(self) -> None:
        self._rename(f"t_reused_{uuid.uuid4().hex[:12]}")
        with self.server.connect(self.name, autocommit=True) as conn:
            tables = self._tables(conn)
            with conn.transaction():  # one round trip: the statements as one script
                conn.execute(sql.SQL(" ").join([
                    sql.SQL("SET LOCAL session_replication_role = replica;"),  # no FK order
                    *(sql.SQL("DELETE FROM {};").format(sql.Identifier(table))
                      for table in tables)]))
            conn.execute("SELECT setval(format('%I.%I', schemaname, sequencename)::regclass,"
                         " start_value, false) FROM pg_sequences")
            self.renewals += 1
            if self.renewals % self.VACUUM_EVERY == 0:
                conn.execute("VACUUM")
            filled = [str(row[0]) for row in conn.execute(sql.SQL(" UNION ALL ").join(
                sql.SQL("SELECT {} WHERE EXISTS (SELECT FROM {})").format(
                    sql.Literal(table), sql.Identifier(table))
                for table in tables))]
        assert not filled, f"the reused database was not emptied: {filled}"

    def _rename(self, new: str) -> None:
        with self.server.connect(autocommit=True) as conn:
            for _ in range(self.RENAME_ATTEMPTS):
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                             " WHERE datname = %s AND pid <> pg_backend_pid()", (self.name,))
                try:
                    conn.execute(sql.SQL("ALTER DATABASE {} RENAME TO {}").format(
                        sql.Identifier(self.name), sql.Identifier(new)))
                except psycopg.errors.ObjectInUse:
                    time.sleep(0.02)
                    continue
                self.name = new
                return
        raise AssertionError(f"database {self.name} is still in use after its test")

    @staticmethod
    def _tables(conn: psycopg.Connection[Any]) -> list[str]:
        return [str(row[0]) for row in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")]


def record(node: pytest.Item, kind: str) -> None:
    node.user_properties.append((PROPERTY, kind))


def summary(stats: dict[str, list[Any]]) -> list[str]:
    """One line per database (and one for the tests without one): how many tests ran on it and
    the time they took, setting up, running and tearing down, added up over the workers."""
    tests: dict[str, set[str]] = defaultdict(set)
    seconds: dict[str, float] = defaultdict(float)
    for reports in stats.values():
        for report in reports:
            if not hasattr(report, "duration") or not getattr(report, "nodeid", ""):
                continue
            kind = dict(getattr(report, "user_properties", ())).get(PROPERTY, "no database")
            tests[kind].add(report.nodeid)
            seconds[kind] += report.duration
    order = [*KINDS, "no database"]
    return [f"{kind:<12} {len(tests[kind]):5d} tests {seconds[kind]:8.1f} s"
            for kind in order if tests[kind]]
