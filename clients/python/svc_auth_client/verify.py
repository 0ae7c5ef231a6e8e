"""Offline verification of svc-auth access tokens with the keys the service publishes.

The key set (`/.well-known/jwks.json`) is cached for `cache_ttl` seconds. A token signed with a
key the cache does not know (the service rotated its keys) triggers one fetch, but fetches are
never closer together than `refetch_interval` seconds, so a stream of forged `kid`s cannot make
this site hammer the service. A failed fetch keeps the keys already known.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import jwt
import requests

from svc_auth_client.errors import InvalidToken, KeysUnavailable, MissingToken, TokenExpired

log = logging.getLogger("svc_auth_client")

ACCESS_TOKEN_TYPES = frozenset({"at+jwt", "application/at+jwt"})  # RFC 9068 §2.1
# Only public-key algorithms: a key set is public, so a shared secret never comes from one.
PUBLIC_KEY_ALGORITHMS = frozenset({"ES256", "ES384", "ES512", "RS256", "RS384", "RS512",
                                   "PS256", "PS384", "PS512", "EdDSA"})
REQUIRED_CLAIMS = ("iss", "aud", "sub", "sid", "plan", "jti", "iat", "nbf", "exp")
MAX_TOKEN_LENGTH = 4096

JwksFetcher = Callable[[str, float], Any]


def fetch_jwks(url: str, timeout: float) -> Any:
    """GET the key set (no redirects followed); raises on a network error or a non-2xx."""
    with requests.get(url, timeout=timeout, allow_redirects=False,
                      headers={"Accept": "application/json"}) as response:
        response.raise_for_status()
        return response.json()


def parse_jwks(document: Any) -> dict[str, jwt.PyJWK]:
    """The usable signing keys of a JWKS by `kid`, each pinned to its own `alg`. Keys without
    a `kid`, without a public-key `alg`, or for another use are left out."""
    if not isinstance(document, Mapping) or not isinstance(document.get("keys"), list):
        raise ValueError("not a JSON Web Key Set")
    keys: dict[str, jwt.PyJWK] = {}
    for entry in document["keys"]:
        if not isinstance(entry, Mapping):
            continue
        kid, alg = entry.get("kid"), entry.get("alg")
        if not isinstance(kid, str) or not kid or alg not in PUBLIC_KEY_ALGORITHMS:
            continue
        if entry.get("use", "sig") != "sig":
            continue
        try:
            keys[kid] = jwt.PyJWK(dict(entry), algorithm=alg)
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError, KeyError):
            log.warning("svc-auth JWKS: skipping key %s, which is not a valid %s key", kid, alg)
    return keys


class TokenVerifier:
    """Checks access tokens offline: signature (the key's own algorithm only), `typ`, the
    required claims, `iss`, `aud`, `exp` and `nbf` with `leeway` seconds of clock skew."""

    def __init__(self, jwks_url: str, issuer: str, audience: str, leeway: float = 5,
                 cache_ttl: float = 300, *, refetch_interval: float = 30, timeout: float = 5,
                 fetch: JwksFetcher = fetch_jwks,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.jwks_url, self.issuer, self.audience = jwks_url, issuer, audience
        self.leeway, self.cache_ttl = leeway, cache_ttl
        self.refetch_interval, self.timeout = refetch_interval, timeout
        self._fetch, self._clock = fetch, clock
        self._lock = threading.Lock()
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None  # the last fetch that worked
        self._attempted_at: float | None = None  # the last fetch, whatever its outcome
        self.fetches = 0  # how many times the key set was requested (for tests and metrics)

    def verify(self, token: str | None) -> dict[str, Any]:
        """The token's claims; MissingToken, InvalidToken or TokenExpired when it is refused,
        KeysUnavailable when no key set could ever be fetched."""
        if not token:
            raise MissingToken()
        if len(token) > MAX_TOKEN_LENGTH:
            raise InvalidToken("The access token is too long.")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise InvalidToken() from None
        typ, kid = header.get("typ"), header.get("kid")
        if not isinstance(typ, str) or typ.lower() not in ACCESS_TOKEN_TYPES:
            raise InvalidToken("The token is not an access token.")
        if not isinstance(kid, str) or not kid:
            raise InvalidToken()
        key = self.key(kid)
        if key is None:
            raise InvalidToken("The access token was signed with an unknown key.")
        try:
            claims: dict[str, Any] = jwt.decode(
                token, key.key, algorithms=[key.algorithm_name], audience=self.audience,
                issuer=self.issuer, leeway=self.leeway,
                options={"require": list(REQUIRED_CLAIMS), "verify_signature": True},
            )
        except jwt.ExpiredSignatureError:
            raise TokenExpired() from None
        except jwt.InvalidTokenError:
            raise InvalidToken() from None
        if not all(isinstance(claims[name], str) for name in ("sub", "sid", "plan", "jti")):
            raise InvalidToken()
        return claims

    def key(self, kid: str) -> jwt.PyJWK | None:
        """The key named `kid`: from the cache, or from a fresh key set when the cache is stale
        or does not know it (at most one fetch per `refetch_interval`)."""
        with self._lock:  # one fetch at a time; the others wait for its result
            now = self._clock()
            stale = self._fetched_at is None or now - self._fetched_at >= self.cache_ttl
            if stale and self._may_fetch(now):
                self._refetch(now)
            found = self._keys.get(kid)
            if found is None and self._may_fetch(now):
                self._refetch(now)
                found = self._keys.get(kid)
            if self._fetched_at is None:
                raise KeysUnavailable()
            return found

    def _may_fetch(self, now: float) -> bool:
        return self._attempted_at is None or now - self._attempted_at >= self.refetch_interval

    def _refetch(self, now: float) -> None:
        self._attempted_at = now
        self.fetches += 1
        try:
            keys = parse_jwks(self._fetch(self.jwks_url, self.timeout))
        except (requests.RequestException, ValueError) as error:
            log.warning("svc-auth JWKS: fetching %s failed (%s); keeping %d known keys",
                        self.jwks_url, type(error).__name__, len(self._keys))
            return
        self._keys = keys
        self._fetched_at = now
