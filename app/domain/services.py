"""The domain's tools that are built once per app from its settings: the password hasher, the
access-token issuer (with its keyring) and the live-session lookup."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app

from app.domain.tokens.tokens import AccessTokens
from app.infra.hashing import Hasher
from app.infra.keys import Keyring
from app.infra.live_sessions import LiveSessions

TOOLS_KEY = "svc_auth.domain_tools"  # where the app keeps them, in app.extensions


@dataclass(frozen=True)
class DomainTools:
    hasher: Hasher
    access_tokens: AccessTokens
    live_sessions: LiveSessions

    @classmethod
    def from_config(cls, config: dict[str, Any], instance_path: str) -> DomainTools:
        clock = config["CLOCK"]
        keyring = Keyring(
            config["JWT_ALG"], config["JWT_KEYS"], Path(instance_path) / "jwt-keys.json",
            keep_for=int(config["ACCESS_TOKEN_TTL"]) + int(config["JWT_LEEWAY"]),
            clock=lambda: clock().timestamp(),
        )
        return cls(
            hasher=Hasher(int(config["ARGON2_MEMORY_COST"]), int(config["ARGON2_TIME_COST"]),
                          int(config["ARGON2_PARALLELISM"])),
            access_tokens=AccessTokens(
                keyring, issuer=config["PUBLIC_URL"], audience=config["JWT_AUDIENCE"],
                ttl=int(config["ACCESS_TOKEN_TTL"]), leeway=int(config["JWT_LEEWAY"]),
            ),
            live_sessions=LiveSessions(
                config["REDIS_URL"],
                # A revoked session's access tokens live at most this long.
                revoked_ttl=int(config["ACCESS_TOKEN_TTL"]) + int(config["JWT_LEEWAY"]),
                cache_seconds=float(config["SESSION_CACHE_SECONDS"]),
            ),
        )


def tools() -> DomainTools:
    """The current app's tools."""
    found: DomainTools = current_app.extensions[TOOLS_KEY]
    return found
