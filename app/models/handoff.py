from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class HandoffCode(Model):
    """A one-time code that hands a signed-in person back to a client site, stored as its hash.

    It is bound to the redirect URI it was sent to, the way the person signed in, and the
    client's PKCE challenge; redeeming it opens a session, which a second redemption revokes.
    """

    __tablename__ = "handoff_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(16))
    second_factor: Mapped[str | None] = mapped_column(String(16))  # as the session's
    redirect_uri: Mapped[str] = mapped_column(String(2048))
    code_challenge: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    redeemed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    session_id: Mapped[str | None] = mapped_column(String(36))
    # An OpenID Connect authorization code (domain/oidc/authorization.py) is a handoff code bound
    # also to its client, with the scope, nonce and browser session of the authorization; the
    # handoff's exchange-code refuses it, and the token endpoint refuses every other code.
    client_id: Mapped[str | None] = mapped_column(String(64))
    scope: Mapped[str | None] = mapped_column(String(255))
    nonce: Mapped[str | None] = mapped_column(String(255))
    auth_time: Mapped[datetime | None] = mapped_column(UTCDateTime())
    browser_session_id: Mapped[str | None] = mapped_column(String(36))
