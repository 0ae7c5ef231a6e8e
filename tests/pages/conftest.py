"""Helpers for driving the hosted pages through the test client."""

import re

import pytest

SYMBOLS = "https://symbols.example/cb"
FOOTPRINTS = "https://footprints.example/cb"
SITES = {"symbols": {"redirect_uris": [SYMBOLS], "origins": []},
         "footprints": {"redirect_uris": [FOOTPRINTS], "origins": []}}


@pytest.fixture
def settings():
    return {"CLIENT_SITES": SITES, "GITHUB_CLIENT_ID": "id", "GITHUB_CLIENT_SECRET": "secret"}


def csrf_token(client, path):
    page = client.get(path)
    found = re.search(r'name="csrf_token" type="hidden" value="([^"]+)"', page.text) or \
        re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert found, f"no CSRF token on {path}: {page.status_code}"
    return found.group(1)


def submit(client, path, data, token_from=None):
    """POST a form the way a browser would: with the CSRF token of the page it came from."""
    token = csrf_token(client, token_from or path)
    return client.post(path, data={"csrf_token": token, **data})


@pytest.fixture
def signed_in(client, user):
    """A browser signed in to the service as `user`."""
    response = submit(client, "/login", {"email": user.email, "password": user.password})
    assert response.status_code == 302 and response.headers["Location"] == "/account"
    return client
