"""Units of work: the outermost @writes commits once (or rolls back) and the ones it calls join it.
On SQLite a unit begins IMMEDIATE, so that a read followed by a write waits for the write lock
instead of failing with "database is locked".
Why: docs/architecture/design-notes.md, "Transactions and the unit of work"."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextvars import ContextVar
from functools import wraps
from typing import Any, ParamSpec, TypeVar

from flask import Flask
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.orm import Session, SessionTransaction

from app.extensions import db

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")
E = TypeVar("E", bound=BaseException)

_writing: ContextVar[bool] = ContextVar("svc_auth_writing", default=False)
_KEPT = "_svc_kept_writes"  # set on an error whose unit of work commits before it is raised
_UNTIL_COMMIT = "svc_until_commit"  # session.info key: state that lives until the commit
_BEFORE_COMMIT = "svc_before_commit"  # session.info key: state finished just before it
# session.info key: the first error of what ran after a commit, raised by the unit of work.
_FAILED_AFTER_COMMIT = "svc_failed_after_commit"


def writes(function: Callable[P, R]) -> Callable[P, R]:
    """Make a domain function a unit of work (see the module's doc)."""

    @wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        if _writing.get():  # inside another unit of work: join it
            return function(*args, **kwargs)
        db.session.commit()  # end the read transaction before, keeping what it loaded
        token = _writing.set(True)
        try:
            result = function(*args, **kwargs)
        except BaseException as error:
            if getattr(error, _KEPT, False):
                db.session.commit()
                db.session.info.pop(_FAILED_AFTER_COMMIT, None)  # the error says it already
            else:
                db.session.rollback()
            raise
        else:
            db.session.commit()
            failed = db.session.info.pop(_FAILED_AFTER_COMMIT, None)
            if failed is not None:
                raise failed
        finally:
            _writing.reset(token)
        return result

    return run


def kept(error: E) -> E:
    """`error`, marked so that the unit of work it leaves commits what it wrote first."""
    setattr(error, _KEPT, True)
    return error


def until_commit(key: str, start: Callable[[], S], finish: Callable[[S], None]) -> S:
    """State that lives as long as the current transaction: made by `start()` at its first use,
    handed to `finish` once the transaction commits, dropped if it rolls back. If a `finish`
    raises, the others still run, and the unit of work raises its error after the commit (the
    session cannot run SQL inside the commit's event)."""
    return _held(_UNTIL_COMMIT, key, start, finish)


def before_commit(key: str, start: Callable[[], S], finish: Callable[[S], None]) -> S:
    """Like until_commit, but handed to `finish` just before the transaction commits (what
    `finish` writes is the transaction's last write). A savepoint's release or rollback leaves
    it in place."""
    return _held(_BEFORE_COMMIT, key, start, finish)


def _held(kind: str, key: str, start: Callable[[], S], finish: Callable[[S], None]) -> S:
    held: dict[str, tuple[Any, Callable[[Any], None]]] = db.session.info.setdefault(kind, {})
    if key not in held:
        held[key] = (start(), finish)
    state: S = held[key][0]
    return state


# These run at every transaction's end, on the hot paths too: nothing held, nothing more asked.
def _finish_before_commit(session: Session) -> None:
    # Nothing held, or a savepoint's release: nothing to do.
    if _BEFORE_COMMIT not in session.info or session.in_nested_transaction():
        return
    for state, finish in session.info.pop(_BEFORE_COMMIT, {}).values():
        finish(state)


def _drop_at_the_end(session: Session, transaction: SessionTransaction) -> None:
    if _BEFORE_COMMIT in session.info and transaction.parent is None:
        session.info.pop(_BEFORE_COMMIT)


def _finish_after_commit(session: Session) -> None:
    if _UNTIL_COMMIT not in session.info:
        return
    for state, finish in session.info.pop(_UNTIL_COMMIT).values():
        try:
            finish(state)
        except Exception as error:  # noqa: BLE001 (raised by the unit of work, after this)
            session.info.setdefault(_FAILED_AFTER_COMMIT, error)


def _drop_after_rollback(session: Session) -> None:
    session.info.pop(_UNTIL_COMMIT, None)


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


def _begin_on_sqlite(connection: Connection) -> None:
    if connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE" if _writing.get() else "BEGIN")


def _listen_once(target: Any, name: str, listener: Callable[..., Any]) -> None:
    if not event.contains(target, name, listener):
        event.listen(target, name, listener)


def install(engine: Engine) -> None:
    """Set up `engine`'s connections (SQLite: foreign keys, busy timeout, WAL, our BEGIN)."""
    _listen_once(engine, "connect", _configure_sqlite)
    _listen_once(engine, "begin", _begin_on_sqlite)


def init_app(app: Flask) -> None:
    """Install the listeners on the app's engines and on the session they share."""
    with app.app_context():
        for engine in db.engines.values():
            install(engine)
    _listen_once(db.session, "before_commit", _finish_before_commit)
    _listen_once(db.session, "after_transaction_end", _drop_at_the_end)
    _listen_once(db.session, "after_commit", _finish_after_commit)
    _listen_once(db.session, "after_rollback", _drop_after_rollback)
