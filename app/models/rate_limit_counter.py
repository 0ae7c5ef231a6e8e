from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class RateLimitCounter(Model):
    """A rate-limit counter counted in the database, without Redis or while it fails
    (app/web/limit_storage.py): hits in a fixed window that ends at `expires_at`. The key is a
    keyed hash of flask-limiter's key, so the table holds no email or address in clear."""

    __tablename__ = "rate_limit_counters"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    hits: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
