"""Refusing passwords that appear in public breach corpora, through a k-anonymity range API
(SVC_BREACHED_PASSWORDS_URL): only the first five hex characters of the password's SHA-1 leave
the service, and the answer is compared here (the call itself: app/infra/password_ranges.py).

When the lookup fails (no answer within SVC_BREACHED_PASSWORDS_TIMEOUT, an error), the password
is accepted and the failure logged: an outage of someone else's service must not stop sign-ups,
resets and changes, and the local policy (passwords.py) has already been applied."""

from __future__ import annotations

import hashlib
import logging

from app.domain.accounts.errors import WeakPassword
from app.domain.text import N_
from app.infra import password_ranges
from app.infra.settings import settings

log = logging.getLogger("svc_auth.breached_passwords")
PREFIX_LENGTH = 5


class PasswordBreached(WeakPassword):
    """The password is listed in a breach corpus (said without the password)."""

    code = "password_breached"

    def __init__(self, pointer: str = "#/password") -> None:
        super().__init__(N_("This password has appeared in a data breach, so attackers try it. "
                            "Choose another one."), pointer)


def check(password: str, pointer: str = "#/password") -> None:
    """PasswordBreached when the range API lists the password; nothing when the setting is
    empty (no call) or the lookup fails (logged, without the password or its hash)."""
    config = settings()
    base_url = config.breached_passwords_url.strip()
    if not base_url:
        return
    # (surrogatepass: a lone surrogate, which only a command line can pass, still hashes)
    digest = hashlib.sha1(password.encode("utf-8", "surrogatepass"),
                          usedforsecurity=False).hexdigest().upper()
    prefix, suffix = digest[:PREFIX_LENGTH], digest[PREFIX_LENGTH:]
    try:
        listed = password_ranges.suffixes(base_url, prefix,
                                          config.breached_passwords_timeout)
    except password_ranges.Unavailable as error:
        log.warning("breached-password lookup failed (%s): the password is accepted", error)
        return
    if suffix in listed:
        raise PasswordBreached(pointer)
