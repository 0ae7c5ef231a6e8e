"""Connection settings that every engine gets, and how write transactions begin.

SQLite allows one writer at a time. A deferred transaction that reads and then writes fails at
once ("database is locked") when another connection wrote in between, instead of waiting. So
a unit of work that writes is marked with @writes: its transaction begins IMMEDIATE, taking the
write lock up front and queueing behind other writers for up to the busy timeout. Everything
else begins deferred and, in WAL mode, never waits for a writer. PostgreSQL needs none of this:
there @writes only ends the read transaction that came before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextvars import ContextVar
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

from app.extensions import db

P = ParamSpec("P")
R = TypeVar("R")

_writing: ContextVar[bool] = ContextVar("svc_auth_writing", default=False)


def writes(function: Callable[P, R]) -> Callable[P, R]:
    """Run a domain function's database work in a write transaction (see the module's doc)."""

    @wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if _writing.get():
            return function(*args, **kwargs)
        db.session.commit()  # end the read transaction before, keeping what it loaded
        token = _writing.set(True)
        try:
            return function(*args, **kwargs)
        finally:
            _writing.reset(token)

    return run


@event.listens_for(Engine, "connect")
def _configure_sqlite(dbapi_connection: Any, _record: Any) -> None:
    if not isinstance(dbapi_connection, sqlite3.Connection):
        return
    # Let SQLAlchemy's "begin" event (below) issue BEGIN, instead of the sqlite3 module.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.execute("PRAGMA busy_timeout = 15000")
    if cursor.execute("PRAGMA database_list").fetchone()[2]:  # a file, not :memory:
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.close()


@event.listens_for(Engine, "begin")
def _begin_on_sqlite(connection: Connection) -> None:
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE" if _writing.get() else "BEGIN")
