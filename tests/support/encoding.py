"""Encodings the tests build by hand: base64url without padding, a PKCE pair."""

from __future__ import annotations

import base64
import hashlib
import secrets


def b64url(data: bytes) -> str:
    """`data` in base64url without padding (JWTs, WebAuthn, PKCE)."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge (RFC 7636)."""
    verifier = secrets.token_urlsafe(48)
    return verifier, b64url(hashlib.sha256(verifier.encode("ascii")).digest())
