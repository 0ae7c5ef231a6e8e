"""What happened to an account, for the client sites: an event is written in the unit of work of
the change it reports, so it exists if and only if the change committed; deliveries happen after
(webhooks, back-channel logout). Just before the commit, the account's events of the
transaction take the next numbers of its sequence, so that a receiver can tell the newer of two
events whatever order they arrive in.
Why: docs/architecture/design-notes.md, "Events to client sites"."""

from __future__ import annotations

import secrets
from collections.abc import Collection, Mapping
from enum import StrEnum
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.db.rows import insert_values
from app.db.transactions import before_commit
from app.domain.clock import now
from app.domain.oidc import claims as by_scope
from app.extensions import db
from app.infra.lanes import EVENTS
from app.infra.outbox_worker import wake_when_done
from app.models import AccountEvent, AccountEventSequence, Delivery


class EventType(StrEnum):
    USER_CREATED = "user.created"
    USER_UPDATED = "user.updated"  # data: {"changed": [...], and the new values}
    USER_DISABLED = "user.disabled"
    USER_ENABLED = "user.enabled"
    USER_DELETION_SCHEDULED = "user.deletion_scheduled"
    USER_DELETED = "user.deleted"
    SESSIONS_ENDED = "sessions.ended"  # data: {"reason": ..., "session_ids": [...]}


_UNNUMBERED = "svc_events_unnumbered"


def emit(kind: EventType, user_id: str, data: dict[str, Any] | None = None) -> str:
    """Record an event in the caller's unit of work; its id (the deliveries' webhook-id). The
    outbox's events lane is woken once it commits (app/domain/deliveries.py fans it out)."""
    event_id = f"evt_{secrets.token_urlsafe(18)}"
    insert_values(AccountEvent, id=event_id, type=kind.value, user_id=user_id,
                  occurred_at=now(), data=data or {}, dispatched_at=None, sequence=None)
    before_commit(_UNNUMBERED, dict, _number).setdefault(user_id, []).append(event_id)
    wake_when_done(EVENTS)
    return event_id


def _number(emitted: dict[str, list[str]]) -> None:
    """Give the transaction's events their numbers, as its last writes: each account's counter
    stays locked until the commit, so the numbers follow the order in which the transactions
    commit (on PostgreSQL a concurrent one waits here; on SQLite the unit of work holds the
    write lock already). Taken last, the lock cannot close a cycle with the rows the
    transaction wrote before; accounts in a fixed order, two transactions none between them."""
    db.session.flush()
    upsert: Any = postgresql.insert if db.session.get_bind().dialect.name == "postgresql" \
        else sqlite.insert
    table = AccountEventSequence.__table__
    numbered = []
    for user_id in sorted(emitted):
        ids = emitted[user_id]
        last = db.session.execute(
            upsert(table).values(user_id=user_id, last_sequence=len(ids)).on_conflict_do_update(
                index_elements=[table.c.user_id],
                set_={"last_sequence": table.c.last_sequence + len(ids)})
            .returning(table.c.last_sequence)).scalar_one()
        numbered += [{"event_id": event_id, "number": last - len(ids) + position}
                     for position, event_id in enumerate(ids, start=1)]
    events = cast(Table, AccountEvent.__table__)  # each model maps a Table
    # An event a savepoint rolled back is not there: its number is skipped, never reused.
    db.session.execute(update(events).where(events.c.id == bindparam("event_id"))
                       .values(sequence=bindparam("number")), numbered)


# What a receiver is told -------------------------------------------------------------------

# The keys of an event's data that are claims about the person, by their OpenID Connect names:
# a third-party client is told one when its consent would show it in userinfo.
PERSON_CLAIMS = {"user_id": "sub", "email": "email", "email_verified": "email_verified",
                 "full_name": "name"}
# Facts about the account's life that every site hearing of the account is told.
ACCOUNT_FACTS = ("reason", "erase_after")


def as_told(kind: str, data: Mapping[str, Any], scope: str | None,
            own_sessions: Collection[str] = ()) -> dict[str, Any] | None:
    """What an event's data says to a site: all of it to a first-party site (`scope` None). To
    a third-party client allowed `scope`: the claims its userinfo would give, the facts of the
    account's life, and of the sessions that ended only its own (`own_sessions`); never the
    plan or another site's session. None when nothing of the change is left to tell."""
    if scope is None:
        return dict(data)
    named = {claim: key for key, claim in PERSON_CLAIMS.items() if key in data}
    visible = {*by_scope.allowed(named, scope).values(), *ACCOUNT_FACTS}
    told = {key: value for key, value in data.items() if key in visible}
    if "changed" in data:
        told["changed"] = [key for key in data["changed"] if key in visible]
        if not told["changed"]:
            return None
    if kind == EventType.SESSIONS_ENDED:
        told["session_ids"] = [sid for sid in data.get("session_ids") or []
                               if sid in own_sessions]
        if not told["session_ids"]:
            return None
    return told


# Erasure -------------------------------------------------------------------------------------

PERSONAL = ("email", "full_name")  # the values an erasure takes out of an account's events


def forget_person(user_id: str) -> None:
    """Take the person's address and name out of the account's events and of what their
    deliveries would send; the rest stays, so that a site still learns what kind of change
    happened to which account (the caller's unit of work)."""
    of_account = select(AccountEvent.id).where(
        AccountEvent.user_id == user_id,
        AccountEvent.type.in_((EventType.USER_CREATED, EventType.USER_UPDATED)))
    for model, where in ((AccountEvent, AccountEvent.id.in_(of_account)),
                         (Delivery, Delivery.event_id.in_(of_account))):
        table = cast(Table, model.__table__)
        rows = db.session.execute(select(table.c.id, table.c.data).where(where)).all()
        kept = [{"row_id": row_id, "kept": _without_person(data)} for row_id, data in rows
                if data and any(key in data for key in PERSONAL)]
        if kept:
            db.session.execute(update(table).where(table.c.id == bindparam("row_id"))
                               .values(data=bindparam("kept")), kept)


def _without_person(data: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in PERSONAL}
