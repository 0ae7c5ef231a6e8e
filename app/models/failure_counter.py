from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class FailureCounter(Model):
    """Failed attempts against one subject (an email, an account) from one source (an address,
    a known device, or "*" for anywhere), counted in a window that starts with the first.

    In the database, so every worker and instance counts together and a restart forgets nothing.
    Subject and source are keyed hashes (domain/limits/throttle.py): no email or address in clear.
    """

    __tablename__ = "failure_counters"

    scope: Mapped[str] = mapped_column(String(16), primary_key=True)
    subject: Mapped[str] = mapped_column(String(64), primary_key=True)
    source: Mapped[str] = mapped_column(String(64), primary_key=True)
    failures: Mapped[int] = mapped_column(Integer)
    window_start: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
    last_failure_at: Mapped[datetime] = mapped_column(UTCDateTime())
