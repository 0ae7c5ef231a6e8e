"""The domain's services, built once per app from its settings by the factory and named one by
one: the password hasher, the access-token issuer (with its keyring), the live-session lookup
and the one Redis handle (or None) that the captcha's replay claims and the health checks use."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flask import current_app
from redis import Redis

from app.domain.tokens.tokens import AccessTokens
from app.infra.hashing import Hasher
from app.infra.keys import Keyring
from app.infra.live_sessions import REDIS_TIMEOUT, LiveSessions
from app.infra.settings import Settings

KEY = "svc_auth.domain_services"  # where the app keeps them, in app.extensions


@dataclass(frozen=True)
class Services:
    hasher: Hasher
    access_tokens: AccessTokens
    live_sessions: LiveSessions
    redis: Redis | None


def build(settings: Settings, instance_path: str) -> Services:
    """The services `settings` ask for; no connection is opened until one is used."""
    clock = settings.clock
    # A revoked session's access tokens (and a retired key's) live at most this long.
    longest_token = settings.access_token_ttl + settings.jwt_leeway
    keyring = Keyring(
        settings.jwt_alg, settings.jwt_keys, Path(instance_path) / "jwt-keys.json",
        keep_for=longest_token, clock=lambda: clock().timestamp(),
    )
    redis = (Redis.from_url(settings.redis_url, socket_timeout=REDIS_TIMEOUT,
                            socket_connect_timeout=REDIS_TIMEOUT)
             if settings.redis_url else None)
    return Services(
        hasher=Hasher(settings.argon2_memory_cost, settings.argon2_time_cost,
                      settings.argon2_parallelism),
        access_tokens=AccessTokens(
            keyring, issuer=settings.public_url, audience=settings.jwt_audience,
            ttl=settings.access_token_ttl, leeway=settings.jwt_leeway,
        ),
        live_sessions=LiveSessions(settings.redis_url, revoked_ttl=longest_token,
                                   cache_seconds=settings.session_cache_seconds),
        redis=redis,
    )


def services() -> Services:
    """The current app's services."""
    found: Services = current_app.extensions[KEY]
    return found
