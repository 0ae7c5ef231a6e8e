from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.models.types import UTCDateTime, new_id


class LeasedJob:
    """The columns of a table the outbox's worker works off (app/infra/outbox_worker.py): a job
    is claimed by a lease until `claimed_until`, retried with back-off, and kept as failed when
    its attempts run out. Mail jobs and event deliveries are two such tables.
    Why: docs/architecture/design-notes.md, "Mail outbox"."""

    # Statuses
    PENDING = "pending"  # waiting for its next attempt, or claimed by a worker
    SENT = "sent"
    SKIPPED = "skipped"  # nothing to send: no such account, or no longer needed
    FAILED = "failed"  # every attempt failed: a `retry --failed` command puts it back

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(Integer)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime())
    claimed_by: Mapped[str | None] = mapped_column(String(64))
    claimed_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_error: Mapped[str | None] = mapped_column(String(64))  # the kind of error, no message
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
