from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class SignupCode(Model):
    """The code mailed to an address that has no account yet, to prove it before a passkey-first
    account takes it (app/domain/accounts/signup_codes.py): stored as its hash, one live code per
    address (a new one replaces it), used once, dead after a few wrong tries."""

    __tablename__ = "signup_codes"

    # The canonical address (app/domain/addresses.py).
    email_key: Mapped[str] = mapped_column(String(254), primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
    failures: Mapped[int] = mapped_column(Integer, default=0)
