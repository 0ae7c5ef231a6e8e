"""A database that goes away at a chosen moment and comes back, on a real PostgreSQL: it stops
accepting connections and every open one is ended (pg_terminate_backend), as a restart does.
Import the fixtures `database_url` (the app's database: PostgreSQL, whatever SVC_TEST_DATABASE
says, of the test alone) and `outage` into a test module."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from psycopg import sql

from tests.support import databases
from tests.support.postgres import PostgresServer


@pytest.fixture
def database_url(fresh_postgres_url: str, tmp_path: Path) -> str:
    """The app's database: PostgreSQL, whatever SVC_TEST_DATABASE says, and of this test alone
    (it is the one whose connections stop)."""
    databases.build_schema(tmp_path / "schema", fresh_postgres_url)
    return fresh_postgres_url


class Outage:
    """The app's database going away and coming back."""

    def __init__(self, server: PostgresServer, url: str) -> None:
        self.server, self.name, self.began = server, url.rsplit("/", 1)[1], False

    def _set(self, allowed: bool) -> None:
        with self.server.connect(autocommit=True) as conn:
            conn.execute(sql.SQL("ALTER DATABASE {} WITH ALLOW_CONNECTIONS {}").format(
                sql.Identifier(self.name), sql.SQL("true" if allowed else "false")))
            if not allowed:
                conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                             " WHERE datname = %s AND pid <> pg_backend_pid()", (self.name,))

    def begin_once(self) -> None:
        if not self.began:
            self.began = True
            self._set(False)

    def end(self) -> None:
        self._set(True)


@pytest.fixture
def outage(postgres_server: PostgresServer, database_url: str) -> Iterator[Outage]:
    down = Outage(postgres_server, database_url)
    try:
        yield down
    finally:
        down.end()


def then(outage: Outage, action: Callable[..., Any]) -> Callable[..., Any]:
    """`action`, after which (the first time) the database goes away."""
    def run(*args: Any, **kwargs: Any) -> Any:
        result = action(*args, **kwargs)
        outage.begin_once()
        return result
    return run


def first(outage: Outage, action: Callable[..., Any]) -> Callable[..., Any]:
    """`action`, before which (the first time) the database goes away."""
    def run(*args: Any, **kwargs: Any) -> Any:
        outage.begin_once()
        return action(*args, **kwargs)
    return run
