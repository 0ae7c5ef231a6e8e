"""Whole provider sign-ins through the test client and the local stand-ins (tests/support):
Google is oidc-provider (Node) on 127.0.0.1, GitHub a local server of the tests."""

import base64
import hashlib
from urllib.parse import parse_qs, urlsplit

from tests.support import providers as fixtures
from tests.support.sites import OAUTH_SITES, SYMBOLS_CALLBACK

VERIFIER = "client-site-verifier-" + "x" * 30
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=")
OUR_CALLBACK = "http://127.0.0.1:5000/api/v2/auth/{}/callback"


def provider_settings(oidc_server, github_server):
    """The app's settings for signing in through both stand-ins."""
    return {
        "CLIENT_SITES": OAUTH_SITES,
        "GOOGLE_CLIENT_ID": oidc_server.client_id,
        "GOOGLE_CLIENT_SECRET": oidc_server.client_secret,
        "GOOGLE_METADATA_URL": oidc_server.metadata_url,
        **fixtures.github_settings(github_server),
        "PROVIDER_TIMEOUT": 2,
    }


def sign_in(client, provider, start_path=None, **params):
    """Start, pass through the provider, come back: the Location we send the browser to."""
    start_path = start_path or f"/api/v2/auth/{provider}"
    query = {"redirect_uri": SYMBOLS_CALLBACK, "state": "site-state",
             "code_challenge": CHALLENGE.decode(), "code_challenge_method": "S256", **params}
    start = client.get(start_path, query_string=query)
    assert start.status_code == 302, start.get_data(as_text=True)
    back = fixtures.follow_authorization(start.headers["Location"], OUR_CALLBACK.format(provider))
    parts = urlsplit(back)
    response = client.get(f"{parts.path}?{parts.query}")
    assert response.status_code == 302, response.get_data(as_text=True)
    return response.headers["Location"]


def landing(location):
    parts = urlsplit(location)
    return f"{parts.scheme}://{parts.netloc}{parts.path}", {
        key: values[0] for key, values in parse_qs(parts.query).items()}


def exchange(client, code, provider, verifier=VERIFIER):
    return client.post("/api/v2/auth/exchange-code",
                       json={"code": code, "provider": provider, "code_verifier": verifier})

