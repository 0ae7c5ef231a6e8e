"""The captcha provider's stand-in for any test (a pytest plugin: tests/conftest.py). A module
whose app checks tokens with it imports tests.support.captcha_standin's `captcha_app_settings`
(its `settings`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.captcha_standin import StandIn


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
