from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class AccountEvent(Model):
    """Something that happened to an account that the client sites are told about (webhooks,
    back-channel logout). Written in the transaction of the change it reports; delivered after."""

    __tablename__ = "account_events"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # evt_<random>: webhook-id
    type: Mapped[str] = mapped_column(String(40))  # user.created, user.updated, ...
    user_id: Mapped[str] = mapped_column(String(36), index=True)
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    data: Mapped[dict[str, object]] = mapped_column(JSON)  # what changed, never a secret
    # When the deliveries to each site were made from it (None: not yet).
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
