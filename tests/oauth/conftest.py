"""Client sites and provider credentials for the OAuth tests (tests/support/sites.py)."""

import pytest

from tests.support.sites import OAUTH_SITES, PROVIDERS


@pytest.fixture
def settings():
    return {"CLIENT_SITES": OAUTH_SITES, **PROVIDERS}
