from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import db
from app.models.types import UTCDateTime


class ClientSite(db.Model):
    """A client site registered with `flask sites add` (SVC_CLIENT_SITES holds the others)."""

    __tablename__ = "client_sites"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    redirect_uris: Mapped[list[str]] = mapped_column(JSON)
    origins: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
