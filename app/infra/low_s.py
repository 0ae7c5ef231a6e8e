"""ES256 signatures in one form only: low S (one token, one string).

An ECDSA signature (r, s) has a twin, (r, n - s), that verifies the same message with the same key.
Anyone can turn one into the other, so a token would have two strings: a second one that no
denylist, cache or log entry of the first would match. We issue only the low form (s <= n/2, as
Bitcoin's BIP 62 and libsecp256k1 do) and refuse the high one. cryptography signs with either.
"""

from __future__ import annotations

import base64
import binascii

# The order of the P-256 group (SEC 2, section 2.4.2; FIPS 186-4 D.1.2.3).
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
_HALF_ORDER = P256_ORDER // 2
_SIDE = 32  # bytes of r, then of s, in a JWS ES256 signature (RFC 7518 section 3.4)


def _decode(segment: str) -> bytes | None:
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):  # ValueError: text that is not ASCII
        return None


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def is_low_s(token: str) -> bool:
    """True when the compact ES256 JWS carries a well-formed signature with s <= n/2."""
    signature = _decode(token.rpartition(".")[2])
    if signature is None or len(signature) != 2 * _SIDE:
        return False
    return int.from_bytes(signature[_SIDE:], "big") <= _HALF_ORDER


def normalised(token: str) -> str:
    """The compact ES256 JWS with its signature in low-S form (unchanged when it already is)."""
    signing_input, _, segment = token.rpartition(".")
    signature = _decode(segment)
    if signature is None or len(signature) != 2 * _SIDE:
        raise ValueError("not an ES256 signature")
    s = int.from_bytes(signature[_SIDE:], "big")
    if s <= _HALF_ORDER:
        return token
    low = signature[:_SIDE] + (P256_ORDER - s).to_bytes(_SIDE, "big")
    return f"{signing_input}.{_encode(low)}"
