"""Changing a running app's settings, as a test that needs another value after the app is made
does: app.config and the app's Settings both, checked as at start."""

from __future__ import annotations

from typing import Any

from flask import Flask

from app.infra.settings import KEY, changed


def change_settings(app: Flask, *, checked: bool = True, **changes: Any) -> None:
    """Set settings by their names (`REQUIRE_EMAIL_CONFIRMATION=True`). `checked=False` skips
    the start's checks across settings (a test of production's endpoint rules need not meet
    production's other demands, https and real mail); each value is still parsed."""
    app.config.update(changes)
    app.extensions[KEY] = changed(app.extensions[KEY], changes, checked=checked)
