"""Password hashing with argon2id: verification with rehash, and the same work for an unknown
account as for a wrong password (the rules about passwords: domain/accounts/passwords.py)."""

from __future__ import annotations

import contextlib
import unicodedata
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError


def normalize(password: str) -> str:
    """NFKC, so the same password typed on two keyboards is the same password (NIST 63B)."""
    return unicodedata.normalize("NFKC", password)


@dataclass(frozen=True)
class Verification:
    ok: bool
    needs_rehash: bool = False


class Hasher:
    def __init__(self, memory_cost: int, time_cost: int, parallelism: int) -> None:
        self._argon2 = PasswordHasher(
            memory_cost=memory_cost, time_cost=time_cost, parallelism=parallelism
        )
        self._dummy_hash: str | None = None

    def hash(self, password: str) -> str:
        return self._argon2.hash(normalize(password))

    def verify(self, password_hash: str | None, password: str) -> Verification:
        """Check a password. With no hash (unknown user, no password set), do the same work
        against a dummy hash, so that the answer takes as long as a wrong password."""
        if password_hash is None:
            self._verify_dummy(password)
            return Verification(ok=False)
        try:
            self._argon2.verify(password_hash, normalize(password))
        except (VerificationError, InvalidHashError):
            return Verification(ok=False)
        return Verification(ok=True, needs_rehash=self._argon2.check_needs_rehash(password_hash))

    def _verify_dummy(self, password: str) -> None:
        if self._dummy_hash is None:
            self._dummy_hash = self._argon2.hash("dummy password for unknown accounts")
        with contextlib.suppress(VerificationError):
            self._argon2.verify(self._dummy_hash, normalize(password))
