"""What happened to an account, for the client sites: an event is written in the unit of work of
the change it reports, so it exists if and only if the change committed; deliveries happen after
(webhooks, back-channel logout)."""

from __future__ import annotations

import secrets
from enum import StrEnum
from typing import Any

from app.db.rows import insert_values
from app.db.transactions import until_commit
from app.domain.clock import now
from app.models import AccountEvent


class EventType(StrEnum):
    USER_CREATED = "user.created"
    USER_UPDATED = "user.updated"  # data: {"changed": [...], and the new values}
    USER_DISABLED = "user.disabled"
    USER_ENABLED = "user.enabled"
    USER_DELETION_SCHEDULED = "user.deletion_scheduled"
    USER_DELETED = "user.deleted"
    SESSIONS_ENDED = "sessions.ended"  # data: {"reason": ..., "session_ids": [...]}


_EMITTED = "svc_events_emitted"
_listeners: list[Any] = []  # called with the ids emitted, once their transaction commits


def emit(kind: EventType, user_id: str, data: dict[str, Any] | None = None) -> str:
    """Record an event in the caller's unit of work; its id (the deliveries' webhook-id)."""
    event_id = f"evt_{secrets.token_urlsafe(18)}"
    insert_values(AccountEvent, id=event_id, type=kind.value, user_id=user_id,
                  occurred_at=now(), data=data or {}, dispatched_at=None)
    until_commit(_EMITTED, list, _committed).append(event_id)
    return event_id


def on_commit(listener: Any) -> None:
    """`listener(event_ids)` runs after a transaction that emitted events commits (the delivery
    worker's wake-up). Adding one already there changes nothing (each app adds it)."""
    if listener not in _listeners:
        _listeners.append(listener)


def _committed(event_ids: list[str]) -> None:
    for listener in _listeners:
        listener(event_ids)
