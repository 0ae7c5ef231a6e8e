from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class AccountEvent(Model):
    """Something that happened to an account that the client sites are told about (webhooks,
    back-channel logout). Written in the transaction of the change it reports; delivered after."""

    __tablename__ = "account_events"
    __table_args__ = (UniqueConstraint("user_id", "sequence"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # evt_<random>: webhook-id
    type: Mapped[str] = mapped_column(String(40))  # user.created, user.updated, ...
    user_id: Mapped[str] = mapped_column(String(36), index=True)
    occurred_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    data: Mapped[dict[str, object]] = mapped_column(JSON)  # what changed, never a secret
    # When the deliveries to each site were made from it (None: not yet).
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
    # Its place among the account's events, in the order their transactions committed
    # (1, 2, ...; set just before the commit: app/domain/events.py). A receiver applies a
    # value only from an event newer than the one it has it from.
    sequence: Mapped[int | None] = mapped_column(BigInteger)


class AccountEventSequence(Model):
    """The last sequence number given to an account's events: the row each transaction that
    emits events for the account holds locked for the moment before it commits."""

    __tablename__ = "account_event_sequences"

    user_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    last_sequence: Mapped[int] = mapped_column(BigInteger)
