"""The OpenID Connect tests' app: the client sites of tests/oidc/helpers.py."""

import pytest

from tests.oidc.helpers import SITES


@pytest.fixture
def settings():
    return {"CLIENT_SITES": SITES}
