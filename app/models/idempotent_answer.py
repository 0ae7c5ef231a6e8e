from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class IdempotentAnswer(Model):
    """The first answer to an admin API write sent with an Idempotency-Key, kept so that a
    retry with the same key and body gets it again instead of acting twice."""

    __tablename__ = "idempotent_answers"

    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))  # SHA-256 of method, path and body
    status: Mapped[int] = mapped_column(Integer)
    body: Mapped[dict[str, object] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
