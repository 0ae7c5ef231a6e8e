"""The test accounts' password and what a test knows of an account it made."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from app.domain.clock import now
from app.extensions import db
from app.models import AuthSession, User

PASSWORD = "correct horse battery staple"
# The fields of an account whose owner signed up and proved the address from the same browser:
# the address and the password are both theirs (User.password_is_the_holders).
PROVED_LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)
OWNED = {"email_verified": True, "email_verified_at": PROVED_LONG_AGO,
         "password_proved_at": PROVED_LONG_AGO}


def signed_in_now(user: User) -> AuthSession:
    """A session of `user` that signed in just now (not stored): what a domain call made on its
    behalf (identities.link) checks of it."""
    return AuthSession(user_id=user.id, provider="password", created_at=now())


@dataclass
class Account:
    email: str
    password: str
    id: str


def saved_language(app: Any, email: str) -> str | None:
    """The language saved on the account with `email` (None: none saved)."""
    with app.app_context():
        found: str | None = db.session.scalar(db.select(User.language).where(User.email == email))
        return found
