"""Client sites and provider credentials for the OAuth tests."""

import pytest

SYMBOLS_CALLBACK = "https://symbols.example/auth/callback"
SITES = {
    "symbols": {"redirect_uris": [SYMBOLS_CALLBACK, "http://127.0.0.1:8001/cb"],
                "origins": ["https://symbols.example"]},
}
# Placeholder credentials: enough to turn the providers on for starts that are never followed.
PROVIDERS = {
    "GOOGLE_CLIENT_ID": "google-id", "GOOGLE_CLIENT_SECRET": "google-secret",
    "GITHUB_CLIENT_ID": "github-id", "GITHUB_CLIENT_SECRET": "github-secret",
}


@pytest.fixture
def settings():
    return {"CLIENT_SITES": SITES, **PROVIDERS}
