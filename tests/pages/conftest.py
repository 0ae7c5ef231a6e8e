"""Settings and a signed-in browser for the hosted pages' tests (helpers: tests/support/pages.py
and tests/support/sites.py)."""

import pytest

from tests.support.pages import submit
from tests.support.sites import PAGE_SITES


@pytest.fixture
def settings():
    return {"CLIENT_SITES": PAGE_SITES, "GITHUB_CLIENT_ID": "id", "GITHUB_CLIENT_SECRET": "secret"}


@pytest.fixture
def signed_in(client, user):
    """A browser signed in to the service as `user`."""
    response = submit(client, "/login", {"email": user.email, "password": user.password})
    assert response.status_code == 302 and response.headers["Location"] == "/account"
    return client
