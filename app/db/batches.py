"""Deleting many rows in batches, each its own write transaction: a purge of a year of rows never
holds a lock (on SQLite, the one write lock) for longer than one batch, and never puts more ids
into one statement than a driver takes (PostgreSQL's protocol: 65,535 parameters)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import ColumnElement, delete, select, tuple_
from sqlalchemy.orm import InstrumentedAttribute

from app.db.transactions import writes
from app.extensions import db

BATCH = 5_000


def delete_batched(key: InstrumentedAttribute[Any] | tuple[InstrumentedAttribute[Any], ...],
                   condition: ColumnElement[bool], *,
                   first: Callable[[list[Any]], None] | None = None) -> int:
    """Delete the rows of `key`'s table that match `condition` (keep an index for it), BATCH
    at a time; `first(keys)` deletes what depends on a batch's rows in its transaction.
    `key` is the primary key, or its columns. How many rows were deleted."""
    size = BATCH
    columns = key if isinstance(key, tuple) else (key,)
    deleted = 0
    while True:
        count = _delete_batch(columns, condition, first, size)
        deleted += count
        if count < size:
            return deleted


@writes
def _delete_batch(columns: Sequence[InstrumentedAttribute[Any]], condition: ColumnElement[bool],
                  first: Callable[[list[Any]], None] | None, size: int) -> int:
    found = list(db.session.execute(select(*columns).where(condition).limit(size)))
    if not found:
        return 0
    if len(columns) == 1:
        keys: list[Any] = [row[0] for row in found]
        chosen = columns[0].in_(keys)
    else:
        keys = [tuple(row) for row in found]
        chosen = tuple_(*columns).in_(keys)
    if first is not None:
        first(keys)
    db.session.execute(delete(columns[0].class_).where(chosen)
                       .execution_options(synchronize_session=False))
    return len(found)
