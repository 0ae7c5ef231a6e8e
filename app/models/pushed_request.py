from __future__ import annotations

from datetime import datetime

from sqlalchemy import String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class PushedRequest(Model):
    """An authorization request a client pushed (RFC 9126), stored by the hash of its
    request_uri's random part. The authorization endpoint reads its parameters from here, for
    that client only, until it expires or a code is issued from it. Those waiting at once are
    capped per client, and per address for a public client's (domain/oidc/pushed_requests.py)."""

    __tablename__ = "pushed_requests"

    handle_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    client_id: Mapped[str] = mapped_column(String(64), index=True)
    params: Mapped[str] = mapped_column(Text())  # a JSON object of the request's parameters
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Where a public client's push came from (IPv6 by its /64): anyone may push as one. None for
    # a confidential client's, which proved its secret.
    address: Mapped[str | None] = mapped_column(String(64), index=True)
