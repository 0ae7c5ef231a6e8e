"""The password policy (the hashing: app/infra/hashing.py)."""

from __future__ import annotations

import gzip
import re
from functools import cache
from importlib import resources

from app.domain.accounts.errors import WeakPassword
from app.domain.text import N_
from app.infra.hashing import normalize


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
        raise WeakPassword(N_("Use at least %(num)d characters.", num=min_length), pointer)
    if len(normalized) > max_length:
        raise WeakPassword(N_("Use at most %(num)d characters.", num=max_length), pointer)
    folded = normalized.casefold()
    core = _DECORATION.sub("", folded)
    if folded in common_passwords() or (core and core in common_passwords()):
        raise WeakPassword(
            N_("This password is too common. Choose one that is harder to guess."), pointer
        )
    local_part = email.casefold().partition("@")[0]
    context = {brand.casefold(), email.casefold(), local_part, _DECORATION.sub("", local_part)}
    if folded in context or (core and core in context):
        raise WeakPassword(
            N_("Do not use your email address or the service's name as your password."), pointer
        )
