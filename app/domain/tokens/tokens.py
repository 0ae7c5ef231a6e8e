"""Access tokens (JWT) and the opaque secrets behind refresh tokens.

An access token is checked once, fully, and its claims are then cached until it expires: a client
site verifies the same token many times an hour, and a decode costs twice a Flask request. What
can change after that first check is asked again on every call: whether the key that signed it is
still in force (a revoked key's tokens stop at once), and, separately, whether the session behind
it lives (domain/sessions/sessions.py).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import jwt
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from app.domain.tokens.errors import InvalidToken, TokenExpired
from app.infra import low_s
from app.infra.keys import Keyring, SigningKey

ACCESS_TOKEN_TYPE = "at+jwt"  # noqa: S105 (a media type, not a secret)
MAX_TOKEN_LENGTH = 4096
_REQUIRED_CLAIMS = ("iss", "aud", "sub", "jti", "iat", "nbf", "exp")  # and a person's: sid
REGISTRATION_CLAIM = "client_registration"  # a service client's token: which registration


@dataclass(frozen=True)
class AccessToken:
    token: str
    expires_at: int


@dataclass(frozen=True)
class AccessClaims:
    user_id: str
    session_id: str
    issued_at: int
    not_before: int
    expires_at: int
    audience: str
    client_id: str | None = None


@dataclass(frozen=True)
class ClientClaims:
    """A token a client holds for itself: which client, with which scopes."""

    client_id: str
    scopes: frozenset[str]
    issued_at: int
    not_before: int
    expires_at: int
    registration: str = ""  # the service client's registration it was issued to


Timed = AccessClaims | ClientClaims


class AccessTokens:
    def __init__(self, keyring: Keyring, *, issuer: str, audience: str, ttl: int, leeway: int,
                 cache_size: int = 10_000) -> None:
        self.keyring = keyring
        self.issuer, self.audience, self.ttl, self.leeway = issuer, audience, ttl, leeway
        # token -> (the kid that signed it, its claims)
        self._cache: OrderedDict[str, tuple[str, AccessClaims]] = OrderedDict()
        # A client's own token: (its kid, its claims, its audience). An admin call's token is
        # checked by the limiter (whose call is it) and by the view: its signature once.
        self._client_cache: OrderedDict[str, tuple[str, ClientClaims, Any]] = OrderedDict()
        self._cache_size = cache_size

    def issue(self, *, user_id: str, session_id: str, plan: str, now: datetime,
              extra: dict[str, Any] | None = None, audience: str | None = None) -> AccessToken:
        """`extra`: the `client_id` and `scope` of a token issued to an OpenID Connect client;
        `amr` and `acr` of a sign-in with a second factor. `audience`: a third-party client's
        own client id, instead of the family's shared audience."""
        iat = int(now.timestamp())
        claims: dict[str, Any] = {
            **(extra or {}),
            "iss": self.issuer, "aud": audience or self.audience, "sub": user_id,
            "sid": session_id,
            "plan": plan, "jti": secrets.token_urlsafe(16), "iat": iat, "nbf": iat,
            "exp": iat + self.ttl,
        }
        return AccessToken(self.sign(claims, ACCESS_TOKEN_TYPE), iat + self.ttl)

    def sign(self, claims: dict[str, Any], typ: str) -> str:
        """`claims` signed with the signing key (its `kid` and `typ` in the header); an ES256
        signature in its low-S form. Also the ID tokens' and client tokens' signer."""
        key = self.keyring.signing_key()
        token = jwt.encode(claims, key.private, algorithm=key.alg,
                           headers={"kid": key.kid, "typ": typ})
        return low_s.normalised(token) if key.alg == "ES256" else token

    def verify(self, token: str, now: datetime, *, clients_own: bool = False) -> AccessClaims:
        """The token's claims, or InvalidToken / TokenExpired. Never anything else.

        Only a family token (the shared audience) passes, unless `clients_own`: then also a
        token a third-party client holds for itself (its client id as the audience), which only
        the OpenID Connect endpoints take."""
        at = int(now.timestamp())
        cached = self._cache.get(token)
        if cached is None:
            cached = self._decode(token, at)
        else:
            self._key_in_force(cached[0], cached[1], at)
        claims = cached[1]
        if claims.audience != self.audience and not (
                clients_own and claims.audience == claims.client_id):
            raise InvalidToken()
        self._check_times(claims, at)
        self._remember(token, cached)
        return cached[1]

    def verify_client_token(self, token: str, now: datetime, audience: str) -> ClientClaims:
        """The claims of a token a client holds for itself (client_credentials) with this
        audience, or InvalidToken / TokenExpired. A person's token has the wrong audience."""
        at = int(now.timestamp())
        cached = self._client_cache.get(token)
        if cached is None:
            kid, payload = self._verified_payload(token, at)
            cached = kid, _client_claims_from(payload), payload["aud"]
        kid, claims, token_audience = cached
        if token_audience != audience:
            raise InvalidToken()
        self._key_in_force(kid, claims, at)
        self._check_times(claims, at)
        self._client_cache[token] = cached
        self._client_cache.move_to_end(token)
        if len(self._client_cache) > self._cache_size:
            self._client_cache.popitem(last=False)
        return claims

    def _decode(self, token: str, at: int) -> tuple[str, AccessClaims]:
        kid, payload = self._verified_payload(token, at)
        claims = _claims_from(payload)
        self._key_in_force(kid, claims, at)
        return kid, claims

    def _verified_payload(self, token: str, at: int) -> tuple[str, dict[str, Any]]:
        """The payload of a token our keys signed, with its kid; InvalidToken otherwise."""
        # Compact JWS segments are unpadded base64url (RFC 7515 section 2): with "=" a token
        # would have a second string.
        if len(token) > MAX_TOKEN_LENGTH or "=" in token:
            raise InvalidToken()
        try:
            header = jwt.get_unverified_header(token)
        except (jwt.InvalidTokenError, UnicodeError):  # UnicodeError: a lone surrogate
            raise InvalidToken() from None
        kid = header.get("kid")
        if header.get("typ") != ACCESS_TOKEN_TYPE or not isinstance(kid, str):
            raise InvalidToken()
        # Only our own keys, each pinned to its algorithm: `none`, HS256-with-a-public-key and
        # embedded jwk/jku/x5u headers all fail here, since the header never picks the key.
        key = self.keyring.verification_key(kid, at)
        if key is None or (key.alg == "ES256" and not low_s.is_low_s(token)):
            raise InvalidToken()
        try:
            payload = jwt.decode(
                token, key.public, algorithms=[key.alg], issuer=self.issuer,
                # Times are checked against the service's clock in _check_times, the audience
                # in verify (a client's own tokens are ours too, for other endpoints).
                options={"require": list(_REQUIRED_CLAIMS), "verify_exp": False,
                         "verify_nbf": False, "verify_iat": False, "verify_aud": False},
            )
        except jwt.InvalidTokenError:
            raise InvalidToken() from None
        return kid, payload

    def _key_in_force(self, kid: str, claims: Timed, at: int) -> SigningKey:
        """The key that signed these claims, if it is still in force and was when they were
        issued: a revoked key verifies nothing, a retired one nothing issued after it retired."""
        key = self.keyring.verification_key(kid, at)
        if key is None or (key.retired_at is not None
                           and not key.may_have_signed(claims.issued_at, self.leeway)):
            raise InvalidToken()
        return key

    def _check_times(self, claims: Timed, now: int) -> None:
        if claims.expires_at - claims.issued_at > self.ttl:
            raise InvalidToken()
        if claims.not_before > now + self.leeway or claims.issued_at > now + self.leeway:
            raise InvalidToken()
        if claims.expires_at <= now - self.leeway:
            raise TokenExpired()

    def _remember(self, token: str, signed: tuple[str, AccessClaims]) -> None:
        self._cache[token] = signed
        self._cache.move_to_end(token)
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)


def _claims_from(payload: dict[str, Any]) -> AccessClaims:
    times = [payload[name] for name in ("iat", "nbf", "exp")]
    ids = [payload.get(name) for name in ("sub", "sid", "aud")]
    client_id = payload.get("client_id")
    if any(type(t) is not int for t in times) or any(not isinstance(i, str) for i in ids) \
            or not isinstance(client_id, str | None):
        raise InvalidToken()
    return AccessClaims(user_id=str(ids[0]), session_id=str(ids[1]), issued_at=times[0],
                        not_before=times[1], expires_at=times[2], audience=str(ids[2]),
                        client_id=client_id)


def _client_claims_from(payload: dict[str, Any]) -> ClientClaims:
    times = [payload[name] for name in ("iat", "nbf", "exp")]
    client_id, scope = payload.get("client_id"), payload.get("scope")
    if any(type(t) is not int for t in times) or not isinstance(client_id, str) \
            or payload["sub"] != client_id or not isinstance(scope, str) or "sid" in payload:
        raise InvalidToken()
    registration = payload.get(REGISTRATION_CLAIM, "")
    if not isinstance(registration, str):
        raise InvalidToken()
    return ClientClaims(client_id=client_id, scopes=frozenset(scope.split()),
                        issued_at=times[0], not_before=times[1], expires_at=times[2],
                        registration=registration)


# Opaque secrets: refresh tokens, mailed links -----------------------------------------------------

def new_secret() -> str:
    """256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def hash_secret(raw: str) -> str:
    """What the database keeps instead of the secret. The secret is random, so no salt is needed.
    Any text hashes (a lone surrogate too): it simply matches no secret of ours."""
    return hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def keyed_digest(secret: str, purpose: str, text: str) -> bytes:
    """HMAC-SHA256 of `text` under a key derived from `secret` (the app's SECRET_KEY) for this
    `purpose` alone: the same text gives unrelated digests for two purposes. Any text digests."""
    key = hashlib.sha256(f"svc-auth {purpose}\0{secret}".encode("utf-8", "surrogatepass")).digest()
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).digest()


def _sealing_key(holder: str, purpose: str) -> bytes:
    return hashlib.sha256(f"svc-auth {purpose}\0{holder}".encode()).digest()


def seal(holder: str, secret: str, *, purpose: str) -> bytes:
    """Encrypt `secret` so that only whoever holds `holder` can read it back, for this `purpose`
    alone ("successor": a refresh token's; "mail job": a mailed link's)."""
    nonce = secrets.token_bytes(12)
    return nonce + AESGCM(_sealing_key(holder, purpose)).encrypt(nonce, secret.encode(), None)


def unseal(holder: str, sealed: bytes, *, purpose: str) -> str:
    """The secret `seal` sealed; cryptography's InvalidTag when `holder` or `purpose` differ."""
    return AESGCM(_sealing_key(holder, purpose)).decrypt(sealed[:12], sealed[12:], None).decode()
