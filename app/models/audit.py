from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, Index, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class AuditEvent(Model):
    """A security event. Never holds a password, a token or a link."""

    __tablename__ = "audit_events"
    # An account's events newest first, a page at a time (app/domain/admin/activity.py): read in
    # that order from the account's own entries, never by walking everyone's events back.
    __table_args__ = (Index("ix_audit_events_user_id_at_id", "user_id", "at", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    event: Mapped[str] = mapped_column(String(40))
    user_id: Mapped[str | None] = mapped_column(String(36))
    session_id: Mapped[str | None] = mapped_column(String(36))
    ip: Mapped[str | None] = mapped_column(String(45))
    user_agent: Mapped[str | None] = mapped_column(String(255))
    # Who acted, when not the account's owner: `client:<name>` (the admin API),
    # `operator:<account id>` (the console), `cli`.
    actor: Mapped[str | None] = mapped_column(String(80))
    # The operator's address when the change or read was made (an address changes; the trail
    # keeps the one they had).
    actor_email: Mapped[str | None] = mapped_column(String(320))
    # An operator or a service client looked, and changed nothing: left out of the listings
    # unless asked for.
    read: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # What a change changed: {"plan": {"before": "free", "after": "pro"}}, only the fields
    # app/domain/audit.py allows (never a hash, a key or a token).
    changes: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
