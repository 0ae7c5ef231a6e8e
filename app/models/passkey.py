from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime, new_id


class Passkey(Model):
    """A passkey (a WebAuthn credential) of an account: it signs in alone, or serves as the
    second step after a password or a provider."""

    __tablename__ = "passkeys"
    __table_args__ = (Index("ix_passkeys_user_id", "user_id"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # The credential id is up to 1,023 bytes: it is looked up by its SHA-256.
    credential_key: Mapped[str] = mapped_column(String(64), unique=True)
    credential_id: Mapped[bytes] = mapped_column(LargeBinary())
    public_key: Mapped[bytes] = mapped_column(LargeBinary())  # COSE
    sign_count: Mapped[int] = mapped_column(BigInteger())
    transports: Mapped[str] = mapped_column(String(200))  # comma-separated, as the browser said
    name: Mapped[str] = mapped_column(String(64))
    backup_eligible: Mapped[bool] = mapped_column(Boolean())  # a synced passkey
    backed_up: Mapped[bool] = mapped_column(Boolean())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # Whether it signs in alone. A password reset takes that away (a passkey is a way in, like
    # a provider, and may be a thief's); it comes back when the passkey answers a second step
    # after the new password: then its holder knows that password too.
    signs_in_alone: Mapped[bool] = mapped_column(Boolean(), default=True)


class PasskeyChallenge(Model):
    """The challenge of one WebAuthn ceremony, stored as its hash: single-use, short-lived, for
    one purpose, and bound to the account (registering) or the pending sign-in (a second step)
    it was made for."""

    __tablename__ = "passkey_challenges"

    REGISTER = "register"
    SIGN_IN = "sign_in"
    SECOND_STEP = "second_step"
    OWNER_PROOF = "owner_proof"  # an account without a password proving its holder is here

    challenge_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    purpose: Mapped[str] = mapped_column(String(16))
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    pending_hash: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
