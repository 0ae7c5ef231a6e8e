from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class OneTimeToken(Model):
    """A token sent by email (password reset, email confirmation), stored as its hash.

    Bound to one purpose and one user; used once; replaced by a newer one of the same purpose.
    """

    __tablename__ = "one_time_tokens"

    RESET_PASSWORD = "reset_password"  # noqa: S105 (a purpose, not a password)
    CONFIRM_EMAIL = "confirm_email"
    CHANGE_EMAIL = "change_email"  # sent to the new address: opening it makes the change
    UNDO_EMAIL_CHANGE = "undo_email_change"  # sent to the old address
    UNDO_DELETION = "undo_deletion"
    # (purpose, email): the undo links that hold an address (accounts.address_taken), asked
    # at every sign-up.
    __table_args__ = (Index("ix_one_time_tokens_user_purpose", "user_id", "purpose"),
                      Index("ix_one_time_tokens_purpose_email", "purpose", "email"))

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    purpose: Mapped[str] = mapped_column(String(32))
    # The address the token was sent to: a confirmation proves only that address.
    email: Mapped[str] = mapped_column(String(254))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
