from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.extensions import Model
from app.models.types import UTCDateTime, new_id
from app.models.user import User


class AuthSession(Model):
    """One sign-in on one device. Access and refresh tokens are only as alive as their session."""

    __tablename__ = "sessions"
    # Has the account signed in from this device before: one probe (domain/new_devices.py).
    __table_args__ = (Index("ix_sessions_user_device", "user_id", "device"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(16))  # password, google, github
    # The second factor the sign-in proved (totp, recovery_code), if any: the tokens' amr/acr.
    second_factor: Mapped[str | None] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Both indexed: `flask purge` deletes the sessions that ended by either.
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # the absolute limit
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime(), index=True)
    revoke_reason: Mapped[str | None] = mapped_column(String(32))
    ip: Mapped[str | None] = mapped_column(String(45))
    user_agent: Mapped[str | None] = mapped_column(String(255))
    # The device it was opened from: a digest of its browser (user agent) and network (an IPv4
    # address, an IPv6 /64), sessions.device_of(); NULL for a session older than the column.
    device: Mapped[str | None] = mapped_column(String(32))
    # A session opened for an OpenID Connect client (app/domain/oidc/authorization.py): the client
    # it belongs to (its refresh tokens work for that client only), the scope it was granted, and
    # the browser session (single sign-on) it was opened through, which ends it at logout.
    client_id: Mapped[str | None] = mapped_column(String(64))
    scope: Mapped[str | None] = mapped_column(String(255))
    browser_session_id: Mapped[str | None] = mapped_column(String(36), index=True)
    # The family site a handoff opened this session for (the device list names it); an OpenID
    # Connect client's session names its client in client_id instead.
    site: Mapped[str | None] = mapped_column(String(64))

    user: Mapped[User] = relationship(lazy="joined")


class RefreshToken(Model):
    """A refresh token, stored only as its SHA-256. Each use rotates it to a successor."""

    __tablename__ = "refresh_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    session_id: Mapped[str] = mapped_column(
        ForeignKey("sessions.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())  # idle limit, capped by session's
    rotated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The successor token, encrypted under a key only this token's holder can derive, so a
    # client that refreshes twice within the grace window gets the same successor back.
    successor_sealed: Mapped[bytes | None] = mapped_column(LargeBinary)

    session: Mapped[AuthSession] = relationship(lazy="joined")
