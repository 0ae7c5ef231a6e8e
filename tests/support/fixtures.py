"""Fixtures of the recovery and outbox tests."""

from __future__ import annotations

import pytest

from tests.support.apps import build_app, dispose_app


@pytest.fixture
def next_app(tmp_path, clock, settings, database_url):
    """Another process of the service on the same database: a restarted worker, or another
    instance."""
    apps = []

    def start():  # type: ignore[no-untyped-def]
        apps.append(build_app(tmp_path / f"next-{len(apps)}", clock, settings, database_url))
        return apps[-1]

    yield start
    for app in apps:
        dispose_app(app)
