"""The image, built once for tests/system/image (the Containerfile as shipped, on the mmdebstrap
base)."""

from __future__ import annotations

import pytest

from tests.support.containers import base_image, build_image

IMAGE = "localhost/svc-auth:test"


@pytest.fixture(scope="session")
def base() -> str:
    return base_image()


@pytest.fixture(scope="session")
def image(base: str) -> str:
    build_image(IMAGE, base)
    return IMAGE
