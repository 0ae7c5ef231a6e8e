from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.leased_job import LeasedJob


class Delivery(LeasedJob, Model):
    """An account event to tell one client site (app/domain/deliveries.py): a webhook, or an
    OpenID Connect back-channel logout for one of the site's sessions (`sid`). Written by the
    fan-out of the event, once (the unique key), and worked off by the outbox's worker like a
    mail job; what it sends is built from the event when it runs."""

    __tablename__ = "event_deliveries"

    # Kinds
    WEBHOOK = "webhook"
    BACKCHANNEL_LOGOUT = "backchannel_logout"

    __table_args__ = (
        UniqueConstraint("event_id", "site", "kind", "sid"),
        Index("ix_event_deliveries_status_next_attempt", "status", "next_attempt_at"),
        # The operators' list, newest first (app/domain/deliveries.py, `recent`): all, one
        # site's, or those in one status, each read in order from an index and stopped at the
        # page's end.
        Index("ix_event_deliveries_created_at_id", "created_at", "id"),
        Index("ix_event_deliveries_site_created_at_id", "site", "created_at", "id"),
        Index("ix_event_deliveries_status_created_at_id", "status", "created_at", "id"),
    )

    event_id: Mapped[str] = mapped_column(String(40), index=True)
    site: Mapped[str] = mapped_column(String(64))
    # A back-channel logout's session: the `sid` its ID tokens carried; "" for a webhook.
    sid: Mapped[str] = mapped_column(String(36))
    # A webhook's `data`, as this site may be told it (its consent), fixed at the fan-out;
    # None for a back-channel logout.
    data: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
