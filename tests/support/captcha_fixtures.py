"""A service that checks captcha tokens with a local stand-in for the provider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.captcha.standin import StandIn, captcha_settings


@pytest.fixture
def standin() -> Iterator[StandIn]:
    server = StandIn().start()
    yield server
    server.stop()


@pytest.fixture
def captcha_mode() -> str:
    """Override with @pytest.mark.parametrize("captcha_mode", [...])."""
    return "on"


@pytest.fixture
def captcha_extra() -> dict[str, Any]:
    return {}


@pytest.fixture
def settings(standin: StandIn, captcha_mode: str, captcha_extra: dict[str, Any]) -> dict[str, Any]:
    return captcha_settings(standin, captcha_mode, **captcha_extra)
