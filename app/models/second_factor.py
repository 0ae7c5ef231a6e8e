from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, new_id


class TotpFactor(Model):
    """An authenticator app (TOTP, RFC 6238) of an account: at most one. It counts once a code
    confirmed it (`confirmed_at`); until then it is an enrolment in progress."""

    __tablename__ = "totp_factors"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    secret: Mapped[str] = mapped_column(String(64))  # base32, as the app holds it
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The time step of the last code accepted: that code, and any older one, is refused.
    last_used_step: Mapped[int | None] = mapped_column(BigInteger())


class RecoveryCode(Model):
    """One of an account's single-use recovery codes, stored as its hash."""

    __tablename__ = "recovery_codes"
    __table_args__ = (Index("ix_recovery_codes_user_id", "user_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    code_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class PendingSignIn(Model):
    """A sign-in whose first factor (a password, a provider) was authenticated and whose second
    is still to come, stored as the hash of its token: short-lived, single-use, for one purpose
    (the hosted pages' second step, or the API's `mfa_token`), with where it goes once the
    second step is done (domain/sessions/destinations.py)."""

    __tablename__ = "pending_sign_ins"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    purpose: Mapped[str] = mapped_column(String(16))
    provider: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    destination: Mapped[str | None] = mapped_column(String(8))  # api, browser, site
    redirect_uri: Mapped[str | None] = mapped_column(String(2048))
    code_challenge: Mapped[str | None] = mapped_column(String(128))
    client_state: Mapped[str | None] = mapped_column(String(512))
