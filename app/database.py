"""Connection settings that every engine gets, whatever the database."""

from __future__ import annotations

import sqlite3
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine


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
def _begin_immediate_on_sqlite(connection: Connection) -> None:
    # A deferred SQLite transaction that reads and then writes fails at once ("database is
    # locked") when another process wrote in between; IMMEDIATE takes the write lock up front,
    # so concurrent refreshes and sign-ups wait their turn instead. PostgreSQL needs none of this.
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")
