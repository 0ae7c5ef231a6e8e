"""The contract fuzzers' app and their summary (tests/system/contract).

The app is built like tests/conftest.py's `app` fixture (a fresh SQLite file, a cheap argon2id, no
rate limits, mail kept in memory), plus one registered client site so that `redirect_uri` and
`callback` values can match, and no provider credentials, so that the provider starts answer their
documented 404 `provider_not_enabled`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app import create_app
from app.extensions import db
from tests.support.apps import ServerLikeClient

# Fuzzers run a fixed seed locally, and derandomized in CI (`CI=true`), so a CI run never finds
# something the next run cannot reproduce.
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")

SITE_REDIRECT_URI = "https://symbols.example/auth/callback"
CLIENT_SITES = {"symbols": {"redirect_uris": [SITE_REDIRECT_URI],
                            "origins": ["https://symbols.example"]}}

# The user property of a test's report that carries lines the fuzzers want printed at the end of
# the run (how many cases they ran): a report reaches the main process from a pytest-xdist worker.
FUZZ_SUMMARY = "contract fuzzing"


def build_contract_app(directory: Path, **overrides: Any) -> Flask:
    """An app for the fuzzers (tables created); `tests.support.apps.dispose_app` closes it."""
    app = create_app({
        "INSTANCE_PATH": str(directory / "instance"),
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{directory}/contract.db",
        "MAIL_URL": "memory://", "MAIL_RETRY_DELAY": 0.01,
        "SECRET_KEY": "test",
        "ARGON2_MEMORY_COST": 64, "ARGON2_TIME_COST": 1, "ARGON2_PARALLELISM": 1,
        "RATELIMIT_ENABLED": False,
        "CLIENT_SITES": CLIENT_SITES,
        # Whatever the environment says: no provider is enabled here.
        "GOOGLE_CLIENT_ID": None, "GOOGLE_CLIENT_SECRET": None,
        "GITHUB_CLIENT_ID": None, "GITHUB_CLIENT_SECRET": None,
        **overrides,
    })
    app.test_client_class = ServerLikeClient
    with app.app_context():
        db.create_all()
    return app


def report_fuzz(node: pytest.Item, lines: list[str]) -> None:
    node.user_properties.append((FUZZ_SUMMARY, "\n".join(lines)))
