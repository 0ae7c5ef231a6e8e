"""The one source of "now" for the domain, so tests can move time instead of sleeping."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from app.infra.settings import settings


def system_clock() -> datetime:
    return datetime.now(UTC)


def now() -> datetime:
    clock: Callable[[], datetime] = settings().clock
    return clock()
