"""Changing a running app's settings, as a test that needs another value after the app is made
does: app.config and the app's Settings both, checked as at start."""

from __future__ import annotations

from typing import Any

from flask import Flask

from app.infra.settings import KEY, changed


def change_settings(app: Flask, **changes: Any) -> None:
    """Set settings by their names (`REQUIRE_EMAIL_CONFIRMATION=True`)."""
    app.config.update(changes)
    app.extensions[KEY] = changed(app.extensions[KEY], changes)
