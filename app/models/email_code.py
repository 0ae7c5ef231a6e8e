from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class EmailCode(Model):
    """A one-time code and link mailed to an address (signing in by mail, proving an address),
    stored as hashes: one live per address and purpose, single use, minutes-long, with a bounded
    number of wrong codes. Not bound to an account: an address with none may prove itself.
    Rules: app/domain/accounts/email_codes.py."""

    __tablename__ = "email_codes"

    SIGN_IN = "sign_in"
    SIGN_UP = "sign_up"  # proving an address before a passkey-first account takes it

    email_key: Mapped[str] = mapped_column(String(254), primary_key=True)  # addresses.key
    purpose: Mapped[str] = mapped_column(String(32), primary_key=True)
    code_hash: Mapped[str] = mapped_column(String(64))  # keyed: a leaked table gives no codes
    link_hash: Mapped[str] = mapped_column(String(64), unique=True)
    # The browser that asked (a hash of a value only its cookie holds): the link signs in
    # there alone. None: asked through the API, the link only shows the code.
    browser_hash: Mapped[str | None] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(Integer)  # codes tried, right or wrong
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)  # for the purge
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
