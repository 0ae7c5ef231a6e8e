from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class ServiceClient(Model):
    """A program that calls the admin API (`flask clients add`): no redirect URI, no person
    signed in; it holds a secret and the admin scopes it was registered with."""

    __tablename__ = "service_clients"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    secret_hash: Mapped[str] = mapped_column(String(64))  # SHA-256 of 256 random bits
    scopes: Mapped[list[str]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Random, new with each `clients add`, and carried by the client's tokens: a removed
    # client's tokens never pass for those of a client added later under its name. ("" for
    # clients added before tokens carried it, whose tokens carry none.)
    registration: Mapped[str] = mapped_column(String(32), server_default="")
