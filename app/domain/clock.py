"""The one source of "now" for the domain, so tests can move time instead of sleeping."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from flask import current_app


def system_clock() -> datetime:
    return datetime.now(UTC)


def now() -> datetime:
    clock: Callable[[], datetime] = current_app.config["CLOCK"]
    return clock()
