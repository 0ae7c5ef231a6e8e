"""The long-lived objects the domain needs (hasher, token issuer), built once per app."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flask import current_app

from app.domain.directory import SessionDirectory
from app.domain.keys import Keyring
from app.domain.passwords import Hasher
from app.domain.tokens import AccessTokens


@dataclass(frozen=True)
class Services:
    hasher: Hasher
    access_tokens: AccessTokens
    directory: SessionDirectory

    @classmethod
    def from_config(cls, config: dict[str, Any], instance_path: str) -> Services:
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
            directory=SessionDirectory(
                config["REDIS_URL"],
                # A revoked session's access tokens live at most this long.
                revoked_ttl=int(config["ACCESS_TOKEN_TTL"]) + int(config["JWT_LEEWAY"]),
                cache_seconds=float(config["SESSION_CACHE_SECONDS"]),
            ),
        )


def services() -> Services:
    found: Services = current_app.extensions["svc-auth"]
    return found
