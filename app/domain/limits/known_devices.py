"""Known devices: a browser that has signed in to an account before.

The hosted pages keep a cookie that names the browser (a random device id) and carries, for each
of the last few accounts signed in with it, a tag: an HMAC under the app's secret over the device
id and the account id. Nothing in it names the account; only the service can make or check a tag.
The limits (domain/limits/throttle.py) let a correct password from a known device through while
strangers are failing on the same account, and count that device's own failures apart.
"""

from __future__ import annotations

import base64
import hmac
import re
import secrets

from app.domain.tokens import tokens
from app.infra.settings import settings

VERSION = "1"
MAX_ACCOUNTS = 5  # one browser, a few accounts (a family computer); the oldest tag drops out
_PART = re.compile(r"^[A-Za-z0-9_-]{22}$")  # 128 bits, base64url without padding
_MAX_COOKIE = 2 + 23 * (MAX_ACCOUNTS + 1)


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _tag(device_id: str, user_id: str) -> str:
    digest = tokens.keyed_digest(settings().secret_key, "known-device",
                                 f"{device_id}\0{user_id}")
    return _b64(digest[:16])


def _parse(untrusted_cookie: str | None) -> tuple[str, list[str]] | None:
    """The device id and tags of a well-formed cookie, None otherwise (nothing checked yet)."""
    if not untrusted_cookie or len(untrusted_cookie) > _MAX_COOKIE:
        return None
    version, _, rest = untrusted_cookie.partition(".")
    parts = rest.split(".")
    if version != VERSION or not all(_PART.match(part) for part in parts):
        return None
    return parts[0], parts[1:]


def device_of(untrusted_cookie: str | None, user_id: str) -> str | None:
    """The device id, when the cookie shows that this browser signed in to `user_id` before."""
    parsed = _parse(untrusted_cookie)
    if parsed is None:
        return None
    device_id, tags = parsed
    expected = _tag(device_id, user_id)
    return device_id if any(hmac.compare_digest(expected, tag) for tag in tags) else None


def remember(untrusted_cookie: str | None, user_id: str) -> str:
    """The cookie to set after `user_id` signed in on this browser: the same device id (a new one
    if the cookie is missing or malformed), this account's tag first."""
    parsed = _parse(untrusted_cookie)
    device_id, tags = parsed if parsed else (_b64(secrets.token_bytes(16)), [])
    tag = _tag(device_id, user_id)
    kept = [tag, *(other for other in tags if other != tag)][:MAX_ACCOUNTS]
    return ".".join((VERSION, device_id, *kept))
