"""The test accounts' password and what a test knows of an account it made."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

PASSWORD = "correct horse battery staple"
# The fields of an account whose owner signed up and proved the address from the same browser:
# the address and the password are both theirs (User.password_is_the_holders).
PROVED_LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
OWNED = {"email_verified": True, "email_verified_at": PROVED_LONG_AGO,
         "password_proved_at": PROVED_LONG_AGO}


@dataclass
class Account:
    email: str
    password: str
    id: str
