"""Helpers for the OpenID Connect provider's tests through the test client: a public and a
confidential client, and the steps of the authorization code flow with PKCE, done as a browser
and a client would. (tests/unit/oidc/conftest.py registers the clients.)"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from app.domain.tokens import tokens
from tests.support.pages import submit

PUBLIC = "notes"
PUBLIC_URI = "https://notes.example/cb"
CONFIDENTIAL = "ledger"
CONFIDENTIAL_URI = "https://ledger.example/cb"
SECRET = "ledger-secret-" + "x" * 40
SITES = {
    PUBLIC: {"redirect_uris": [PUBLIC_URI], "origins": []},
    CONFIDENTIAL: {"redirect_uris": [CONFIDENTIAL_URI], "origins": [],
                   "client_secret_sha256": tokens.hash_secret(SECRET),
                   "token_endpoint_auth_method": "client_secret_basic",
                   "post_logout_redirect_uris": ["https://ledger.example/bye"]},
    "outsider": {"redirect_uris": ["https://outsider.example/cb"], "origins": [],
                 "first_party": False},
}


@dataclass
class Pkce:
    verifier: str
    challenge: str


def pkce() -> Pkce:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return Pkce(verifier, challenge.rstrip(b"=").decode())


def authorize_query(client_id: str = PUBLIC, redirect_uri: str = PUBLIC_URI,
                    verifier: Pkce | None = None, **extra: Any) -> dict[str, str]:
    query = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
             "scope": "openid email profile", "state": "st-1", "nonce": "n-1"}
    if verifier is not None:
        query |= {"code_challenge": verifier.challenge, "code_challenge_method": "S256"}
    return {**query, **extra}


def query_of(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


def sign_in_through(client, response, user) -> Any:
    """Follow the authorization endpoint to the login page, sign in with the form (its CSRF
    token), and follow the sign-in back to the authorization endpoint."""
    assert response.status_code == 302, response.text
    login_path = response.headers["Location"]
    assert login_path.startswith("/login") or login_path.startswith("/signup")
    signed = submit(client, "/login", {"email": user.email, "password": user.password},
                    token_from=login_path)
    assert signed.status_code == 302 and signed.headers["Location"].startswith("/oauth2/authorize")
    return client.get(signed.headers["Location"])


def get_code(client, user, query: dict[str, str]) -> str:
    response = client.get("/oauth2/authorize?" + urlencode(query))
    if response.headers.get("Location", "").startswith("/"):
        response = sign_in_through(client, response, user)
    assert response.status_code == 302, response.text
    back = query_of(response.headers["Location"])
    assert "code" in back, back
    return back["code"]


def client_post(client, path: str, data: dict[str, str],
                auth: tuple[str, str] | None = None) -> Any:
    """A client's form POST, with HTTP Basic authentication when `auth` is given."""
    headers = {}
    if auth is not None:
        raw = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        headers["Authorization"] = f"Basic {raw}"
    return client.post(path, data=data, headers=headers)


def token_request(client, data: dict[str, str], auth: tuple[str, str] | None = None) -> Any:
    return client_post(client, "/oauth2/token", data, auth)


def redeem(client, code: str, verifier: Pkce | None, client_id: str = PUBLIC,
           redirect_uri: str = PUBLIC_URI, auth: tuple[str, str] | None = None) -> Any:
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
    if auth is None:
        data["client_id"] = client_id
    if verifier is not None:
        data["code_verifier"] = verifier.verifier
    return token_request(client, data, auth)


def signed_in_tokens(client, user) -> dict[str, Any]:
    """Sign in through the public client's authorization request (PKCE): its tokens."""
    verifier = pkce()
    return redeem(client, get_code(client, user, authorize_query(verifier=verifier)),
                  verifier).get_json()


def verify_status(client, access_token: str) -> int:
    return client.get("/api/v2/auth/verify",
                      headers={"Authorization": f"Bearer {access_token}"}).status_code
