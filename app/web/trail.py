"""The audit of what operators and service clients ask over HTTP (the admin API, the console),
written once the view has answered, as a unit of work of its own.

A change's own event (with its before and after values) is written by the domain in the
change's transaction; what is written here is the call and the reads. The database may fail just
then (a restart): the answer stays what the view decided, the event goes to the log instead
(`audit.not_written`), and a read whose trace could not be kept answers 503 rather than show
what nobody will know was seen. Why: docs/decisions.md, "Audit trail"."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import suppress

from flask import g, request
from sqlalchemy.exc import OperationalError, PendingRollbackError

from app.domain import audit
from app.domain.audit import ClientInfo, ViewEvent
from app.extensions import db


def saw(user_ids: list[str]) -> None:
    """The accounts a listing showed, to be traced as read (by `trace`)."""
    g.trail_accounts = user_ids


def accounts_read() -> list[str | None]:
    """The accounts this request showed: a listing's (`saw`), or the one its path names."""
    listed: list[str] | None = g.pop("trail_accounts", None)
    if listed is not None:
        return list(listed) or [None]
    return [(request.view_args or {}).get("user_id")]


def trace(event: ViewEvent, by: ClientInfo, user_ids: Sequence[str | None], *, read: bool) -> bool:
    """Write the event (one row per account; a read marked as such); False, with the event in
    the log, if the database did not take it."""
    try:
        try:
            _write(event, by, user_ids, read)
        except PendingRollbackError:  # the view's transaction failed: end it, then write
            _roll_back()
            _write(event, by, user_ids, read)
    except OperationalError as error:
        _roll_back()
        audit.not_written(event, by, user_ids, error)
        return False
    return True


def _write(event: ViewEvent, by: ClientInfo, user_ids: Sequence[str | None], read: bool) -> None:
    if read:
        audit.record_reads(event, by, user_ids)
    else:
        for user_id in user_ids:
            audit.record_alone(event, by, user_id=user_id)


def _roll_back() -> None:
    with suppress(OperationalError):  # the connection is gone already
        db.session.rollback()
