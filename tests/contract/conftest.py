"""Shared by the contract fuzzers: the app they run against, and where they report what they ran.

The app is built like tests/conftest.py's `app` fixture (a fresh SQLite file, a cheap argon2id, no
rate limits, mail kept in memory), plus one registered client site so that `redirect_uri` and
`callback` values can match, and no provider credentials, so that the provider starts answer their
documented 404 `provider_not_enabled`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from app import create_app
from app.extensions import db
from tests.conftest import ServerLikeClient

# Fuzzers run a fixed seed locally, and derandomized in CI (`CI=true`), so a CI run never finds
# something the next run cannot reproduce.
IN_CI = os.environ.get("CI", "").lower() not in ("", "0", "false", "no")

SITE_REDIRECT_URI = "https://symbols.example/auth/callback"
CLIENT_SITES = {"symbols": {"redirect_uris": [SITE_REDIRECT_URI],
                            "origins": ["https://symbols.example"]}}

# Lines the fuzzers want printed at the end of the run (how many cases they ran).
FUZZ_SUMMARY = pytest.StashKey[list[str]]()


def build_app(directory: Path, **overrides: Any) -> Flask:
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


def close_app(app: Flask) -> None:
    app.extensions["svc-outbox"].drain()
    app.extensions["svc-outbox"].stop()  # its thread would go on looking at the database
    with app.app_context():
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(scope="module")
def contract_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """One app for a whole module: what the fuzzers create accumulates, as in a running
    service."""
    app = build_app(tmp_path_factory.mktemp("contract"))
    yield app
    close_app(app)


def report_fuzz(config: pytest.Config, lines: list[str]) -> None:
    config.stash.setdefault(FUZZ_SUMMARY, []).extend(lines)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = config.stash.get(FUZZ_SUMMARY, [])
    if lines:
        terminalreporter.section("contract fuzzing")
        for line in lines:
            terminalreporter.write_line(line)
