"""Named locks for units of work (app/db/transactions.py) that check several rows and then write
one, such as a count under a cap: no row lock covers that, since the rows a concurrent unit is
inserting are not there to lock yet."""

from __future__ import annotations

import hashlib

from sqlalchemy import text

from app.extensions import db


def hold(name: str) -> None:
    """Wait until no other transaction holds `name`, then hold it until this one ends. On
    PostgreSQL, an advisory transaction lock on 64 bits of the name's hash (two names that share
    them only wait for each other). SQLite needs none: a unit of work holds the database's write
    lock from its start. Units that hold several names take them in one order, or deadlock."""
    if db.session.get_bind().dialect.name != "postgresql":
        return
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)
    db.session.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": key})
