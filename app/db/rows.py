"""Writing rows with plain statements instead of the ORM's unit of work: new rows, and claims.

Sign-in and refresh write a session, a refresh token and an audit event. On the login path this
runs just after argon2 has swept 19 MiB through the CPU caches, and there the unit of work's
flush (dependency sorting, state tracking, attribute history) was the largest part of what a
login costs besides the hash. The statements run at once, in the caller's transaction.
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from sqlalchemy import ColumnElement, CursorResult, Table, insert, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import make_transient_to_detached
from sqlalchemy.sql.dml import UpdateBase

from app.extensions import Model, db

M = TypeVar("M", bound=Model)


def insert_values(model: type[Any], **values: Any) -> None:
    """INSERT one row of `model`'s table; nothing is kept in the ORM session."""
    db.session.execute(insert(model.__table__), values)


def insert_loaded(model: type[M], columns: dict[str, Any], **related: Any) -> M:
    """INSERT one row and return it as a persistent instance, as if it had just been loaded:
    later changes to it are flushed as usual. `columns` must name every column (one left out
    would be loaded by a query on first access); `related` sets relationships to objects already
    loaded. If the transaction rolls back, the instance is gone from the database like the row."""
    db.session.execute(insert(cast(Table, model.__table__)), columns)  # each model maps a Table
    instance = model(**columns, **related)
    make_transient_to_detached(instance)
    db.session.add(instance)
    return instance


def claim_once(model: type[Any], where: ColumnElement[bool], unclaimed: Any,
               **values: Any) -> bool:
    """Set `values` on the row `where` selects if its `unclaimed` column is still NULL; True for
    the one caller that did. However many requests race for a row (a code redeemed twice, a
    refresh token rotated by two tabs), one wins: the UPDATE reads the row again under its write
    lock. Runs in the caller's transaction; the ORM's copies of the row are left as they were."""
    claimed = changed(
        update(model).where(where, unclaimed.is_(None)).values(**values)
        .execution_options(synchronize_session=False))
    return bool(claimed == 1)


def changed(statement: UpdateBase) -> int:
    """Run an UPDATE or DELETE in the caller's transaction; how many rows it matched. (The
    session's execute() is typed for any statement; for these it returns a CursorResult.)"""
    return cast(CursorResult[Any], db.session.execute(statement)).rowcount


def add_unless_taken(instance: Any) -> bool:
    """Add `instance` and write it at once; False, with nothing written, when a unique constraint
    refuses it (a concurrent request wrote the same first). Only a savepoint rolls back, so the
    caller's unit of work, and whatever a joined caller wrote, goes on."""
    try:
        with db.session.begin_nested():
            db.session.add(instance)
    except IntegrityError:
        return False
    return True
