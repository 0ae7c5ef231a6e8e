"""Password hashing (argon2id), verification with rehash, and the password policy."""

from __future__ import annotations

import contextlib
import gzip
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from app.domain.errors import WeakPassword


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


@cache
def common_passwords() -> frozenset[str]:
    data = resources.files("app.data").joinpath("common-passwords.txt.gz").read_bytes()
    return frozenset(gzip.decompress(data).decode().split())


_DECORATION = re.compile(r"[\W\d_]+")


def check_policy(
    password: str, *, email: str, brand: str, min_length: int, max_length: int,
    pointer: str = "#/password",
) -> None:
    """Raise WeakPassword, with the reason, when the password must not be used.

    Length only, no composition rules (NIST 63B). A password is refused when it is common,
    or when it is the email, its local part or the brand word, with or without digits and
    symbols around it (`Password123!`, `svc2024`).
    """
    normalized = normalize(password)
    if len(normalized) < min_length:
        raise WeakPassword(f"Use at least {min_length} characters.", pointer)
    if len(normalized) > max_length:
        raise WeakPassword(f"Use at most {max_length} characters.", pointer)
    folded = normalized.casefold()
    core = _DECORATION.sub("", folded)
    if folded in common_passwords() or (core and core in common_passwords()):
        raise WeakPassword(
            "This password is too common. Choose one that is harder to guess.", pointer
        )
    local_part = email.casefold().partition("@")[0]
    context = {brand.casefold(), email.casefold(), local_part, _DECORATION.sub("", local_part)}
    if folded in context or (core and core in context):
        raise WeakPassword(
            "Do not use your email address or the service's name as your password.", pointer
        )
