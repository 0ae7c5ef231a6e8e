"""An account's audit events, newest first (by their time, then as written), for operators:
filtered by kind and time, paged; without the reads of operators and service clients unless
asked for."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, or_, select

from app.domain.admin.pages import Page, cursor_of, moment_of, page_size, position_of
from app.extensions import db
from app.models import AuditEvent


@dataclass(frozen=True)
class EventFilter:
    kinds: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    reads: bool = False


def account_events(user_id: str, where: EventFilter, limit: int | None = None,
                   cursor: str | None = None) -> Page[AuditEvent]:
    size = page_size(limit)
    query = select(AuditEvent).where(AuditEvent.user_id == user_id)
    if not where.reads:
        query = query.where(AuditEvent.read.is_(False))
    if where.kinds:
        query = query.where(AuditEvent.event.in_(where.kinds))
    if where.since:
        query = query.where(AuditEvent.at >= where.since)
    if where.until:
        query = query.where(AuditEvent.at < where.until)
    # By time, then by id: of two calls that overlap, the one that took the later time may
    # write its row first, so the ids alone are not in time order.
    position = position_of(cursor, (str, int))
    if position is not None:
        before = moment_of(str(position[0]))
        query = query.where(or_(AuditEvent.at < before,
                                and_(AuditEvent.at == before, AuditEvent.id < position[1])))
    events = list(db.session.scalars(
        query.order_by(AuditEvent.at.desc(), AuditEvent.id.desc()).limit(size + 1)))
    more, events = len(events) > size, events[:size]
    last = events[-1] if events else None
    return Page(events, cursor_of([last.at.isoformat(), last.id]) if more and last else None)
