"""Real relying parties against a real server (issue 15, "Tests that prove it"; issue 26: with
their default settings, on the first try): openid-client, the certified Node library
(tests/support/oidc_rp), and authlib's Flask client, each with a confidential client registered for
the
library's default authentication method and with a public client (PKCE). Nothing of ours runs on
the client side: each library discovers the provider, sends the browser through the hosted login
form, validates the ID token itself (signature from the JWKS, iss, aud, nonce, at_hash), and
calls userinfo, refresh, revocation and logout as a client site would."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pytest
import requests
from authlib.integrations.flask_client import OAuth
from flask import Flask, jsonify, session

from app.domain.tokens.tokens import hash_secret
from tests.support.accounts import PASSWORD
from tests.support.api import all_at_once
from tests.support.client_kit import site_module
from tests.support.node import npm_ci
from tests.support.sqlite_server import Server, start_server

pytestmark = pytest.mark.e2e

RP_DIR = Path(__file__).resolve().parents[2] / "support" / "oidc_rp"
# ledger: client_secret_basic (authlib's default); journal: client_secret_post (openid-client's).
PUBLIC, CONFIDENTIAL, POSTING, EXAMPLE = "notes", "ledger", "journal", "symbols"
SECRET = "ledger-secret-0123456789-0123456789-0123456789"
SECRETS = {CONFIDENTIAL: SECRET, POSTING: "journal-secret-0123456789-0123456789-012345"}
REDIRECT = {PUBLIC: "http://127.0.0.1:9/notes/cb", CONFIDENTIAL: "http://127.0.0.1:9/ledger/cb",
            POSTING: "http://127.0.0.1:9/journal/cb"}
SCOPE = "openid email profile offline_access"  # offline_access: as some libraries ask by default
SITES = {
    PUBLIC: {"redirect_uris": [REDIRECT[PUBLIC]], "origins": []},
    CONFIDENTIAL: {"redirect_uris": [REDIRECT[CONFIDENTIAL]], "origins": [],
                   "client_secret_sha256": hash_secret(SECRET),
                   "token_endpoint_auth_method": "client_secret_basic"},
    POSTING: {"redirect_uris": [REDIRECT[POSTING]], "origins": [],
              "client_secret_sha256": hash_secret(SECRETS[POSTING]),
              "token_endpoint_auth_method": "client_secret_post"},
    # examples/client_site in its OIDC mode, served by Flask's test client (host "localhost").
    EXAMPLE: {"redirect_uris": ["http://localhost/oidc/callback"], "origins": [],
              "post_logout_redirect_uris": ["http://localhost/oidc"]},
}


@pytest.fixture(scope="module")
def provider() -> Iterator[Server]:
    workdir = Path(tempfile.mkdtemp(prefix="svc-e2e-oidc-"))
    try:
        running = start_server(workdir, {"SVC_CLIENT_SITES": json.dumps(SITES)}, workers=2)
        yield running
        running.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _account(provider: Server, email: str) -> str:
    response = requests.post(provider.url("/api/v2/auth/signup"), timeout=10,
                             json={"email": email, "password": PASSWORD, "full_name": "Ada"})
    assert response.status_code == 201, response.text
    return str(response.json()["user"]["id"])


def _openid_client(provider: Server, client_id: str, email: str) -> dict[str, Any]:
    """What tests/support/oidc_rp/rp.mjs printed, run for this client with openid-client's
    defaults."""
    npm_ci(RP_DIR)
    given = {"issuer": provider.base_url, "clientId": client_id, "redirectUri": REDIRECT[client_id],
             "postLogoutUri": REDIRECT[client_id], "email": email, "password": PASSWORD}
    if client_id in SECRETS:
        given["clientSecret"] = SECRETS[client_id]
    result = subprocess.run(["node", "rp.mjs", json.dumps(given)], cwd=RP_DIR, timeout=120,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr + result.stdout
    out: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


@pytest.mark.parametrize("client_id", [PUBLIC, POSTING])
def test_openid_client_signs_in_refreshes_revokes_and_logs_out(provider, client_id):
    email = f"{client_id}-node@example.com"
    user_id = _account(provider, email)
    out = _openid_client(provider, client_id, email)
    assert "tokenError" not in out, out
    assert out["discovered"] == provider.base_url
    assert out["loginPage"] == "/login"
    assert out["claims"] == {"sub": user_id, "aud": client_id, "nonce": out["claims"]["nonce"],
                             "email": email, "at_hash": True, "sid": True, "amr": ["pwd"],
                             "auth_time": True}
    assert out["scope"] == SCOPE
    assert out["userinfo"] == {"sub": user_id, "email": email, "email_verified": False,
                               "name": "Ada"}
    assert out["singleSignOn"] is True
    assert out["refreshed"] is True
    assert out["refreshedTwiceGetsTheSameSuccessor"] is True  # the grace window, as in v2
    assert out["afterRevocation"] == 401
    assert out["logout"] == f"{REDIRECT[client_id]}?state=bye"
    assert out["afterLogout"] == 401
    assert out["promptNoneAfterLogout"] == "login_required"
    assert out["pushedQuery"] == ["client_id", "request_uri"]
    assert out["pushed"] == {"nonce": True, "scope": "openid email"}


def test_openid_client_is_told_how_a_client_registered_otherwise_authenticates(provider):
    """openid-client sends a secret as client_secret_post by default; a client registered for
    client_secret_basic is refused, and the refusal says what to send."""
    email = "ledger-node@example.com"
    _account(provider, email)
    out = _openid_client(provider, CONFIDENTIAL, email)
    assert out["tokenError"] == {"status": 401, "error": "invalid_client", "description": (
        "This client authenticates with client_secret_basic: send client_id and client_secret in "
        "an HTTP Basic Authorization header, not in the form body.")}


def _browser_sign_in(provider: Server, authorize_url: str, email: str,
                     browser: requests.Session | None = None) -> str:
    """A browser: through the hosted login form to the URL the provider sends back."""
    browser = browser or requests.Session()
    page = browser.get(authorize_url, allow_redirects=False, timeout=10)
    login = urljoin(provider.base_url, page.headers["Location"])
    form = browser.get(login, timeout=10).text
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', form).group(1)
    signed = browser.post(urljoin(provider.base_url, "/login"), timeout=10, allow_redirects=False,
                          data={"csrf_token": csrf, "email": email, "password": PASSWORD})
    back = browser.get(urljoin(provider.base_url, signed.headers["Location"]), timeout=10,
                       allow_redirects=False)
    return str(back.headers["Location"])


@pytest.mark.parametrize("client_id", [CONFIDENTIAL, PUBLIC])
def test_authlibs_flask_client_signs_in_refreshes_and_logs_out(provider, client_id):
    """authlib's defaults: a secret as client_secret_basic, none without one; its own refresh of
    an expired token; RP-initiated logout with its state. A public client must use PKCE (RFC 9700
    §2.1.1), which authlib does once asked: the one setting beyond the scope."""
    email = f"{client_id}-authlib@example.com"
    user_id = _account(provider, email)
    site = Flask(client_id)
    site.secret_key = "a client site's own secret"
    refreshed: list[dict[str, Any]] = []
    oauth = OAuth(site, update_token=lambda _name, token, **_: refreshed.append(token))
    oauth.register("svc", client_id=client_id, client_secret=SECRETS.get(client_id),
                   server_metadata_url=provider.url("/.well-known/openid-configuration"),
                   client_kwargs={"scope": SCOPE} | (
                       {} if client_id in SECRETS else {"code_challenge_method": "S256"}))

    @site.get("/login")
    def login():  # type: ignore[no-untyped-def]
        return oauth.svc.authorize_redirect(REDIRECT[client_id])

    @site.get("/cb")
    def callback():  # type: ignore[no-untyped-def]
        token = oauth.svc.authorize_access_token()  # validates the ID token, nonce included
        expired = {**token, "expires_at": 1}  # authlib refreshes it before using it
        info = oauth.svc.userinfo(token=expired)
        session["id_token"], session["access_token"] = token["id_token"], token["access_token"]
        return jsonify(id_claims=dict(token["userinfo"]), scope=token["scope"],
                       userinfo=dict(info), old_refresh_token=token["refresh_token"])

    @site.get("/logout")
    def logout():  # type: ignore[no-untyped-def]
        return oauth.svc.logout_redirect(REDIRECT[client_id], id_token_hint=session["id_token"])

    @site.get("/logged-out")
    def logged_out():  # type: ignore[no-untyped-def]
        return jsonify(oauth.svc.validate_logout_response())

    browser, app_browser = requests.Session(), site.test_client()
    back = _browser_sign_in(provider, app_browser.get("/login").headers["Location"], email,
                            browser)
    assert back.startswith(REDIRECT[client_id] + "?code=")
    done = app_browser.get("/cb?" + back.split("?", 1)[1])
    assert done.status_code == 200, done.text
    body = done.get_json()
    assert body["id_claims"]["sub"] == user_id and body["id_claims"]["aud"] == client_id
    assert body["id_claims"]["email"] == email and body["scope"] == SCOPE
    assert body["userinfo"] == {"sub": user_id, "email": email, "email_verified": False,
                                "name": "Ada"}
    assert len(refreshed) == 1 and refreshed[0]["refresh_token"] != body["old_refresh_token"]

    out = app_browser.get("/logout").headers["Location"]
    assert out.startswith(provider.url("/oauth2/logout?"))
    ended = browser.get(out, allow_redirects=False, timeout=10)
    assert ended.status_code == 302, ended.text
    assert ended.headers["Location"].startswith(REDIRECT[client_id] + "?state=")
    checked = app_browser.get("/logged-out?" + ended.headers["Location"].split("?", 1)[1])
    assert checked.get_json() == {"post_logout_redirect_uri": REDIRECT[client_id]}
    verified = requests.get(provider.url("/api/v2/auth/verify"), timeout=10,
                            headers={"Authorization": f"Bearer {refreshed[0]['access_token']}"})
    assert verified.status_code == 401  # the logout ended what the sign-in opened
    secret = SECRETS.get(client_id)
    again = requests.post(provider.url("/oauth2/token"), timeout=10, data={
        "grant_type": "refresh_token", "refresh_token": refreshed[0]["refresh_token"],
        **({} if secret else {"client_id": client_id})},
        auth=(client_id, secret) if secret else None)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")


def test_the_example_site_signs_in_and_out_with_its_stock_oidc_client(provider):
    email = "example-oidc@example.com"
    _account(provider, email)
    site = site_module().create_app("symbols", provider.base_url).test_client()
    started = site.get("/oidc/login")
    assert started.headers["Location"].startswith(provider.url("/oauth2/authorize?"))
    browser = requests.Session()
    back = _browser_sign_in(provider, started.headers["Location"], email, browser)
    assert back.startswith("http://localhost/oidc/callback?code=")
    landed = site.get(back.removeprefix("http://localhost"))
    assert landed.status_code == 302 and landed.headers["Location"] == "/oidc"
    page = site.get("/oidc").text
    assert f'<strong id="oidc-email">{email}</strong>' in page
    out = site.get("/oidc/logout")
    assert out.headers["Location"].startswith(provider.url("/oauth2/logout?id_token_hint="))
    ended = browser.get(out.headers["Location"], allow_redirects=False, timeout=10)
    assert ended.status_code == 302 and ended.headers["Location"] == "http://localhost/oidc"
    assert "Sign in with OpenID Connect" in site.get("/oidc").text


def test_ten_concurrent_redemptions_of_one_code_give_one_session_and_then_none(provider):
    """RFC 6749 §4.1.2: one wins the race; the replays are refused and revoke what it got."""
    email = "race-oidc@example.com"
    _account(provider, email)
    verifier = "race-verifier-" + "v" * 40
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    query = urlencode({"response_type": "code", "client_id": PUBLIC, "scope": "openid",
                       "redirect_uri": REDIRECT[PUBLIC], "state": "s", "code_challenge":
                       challenge.rstrip(b"=").decode(), "code_challenge_method": "S256"})
    back = _browser_sign_in(provider, provider.url(f"/oauth2/authorize?{query}"), email)
    code = parse_qs(urlsplit(back).query)["code"][0]

    def redeem(_index: int) -> requests.Response:
        return requests.post(provider.url("/oauth2/token"), timeout=10, data={
            "grant_type": "authorization_code", "code": code, "client_id": PUBLIC,
            "redirect_uri": REDIRECT[PUBLIC], "code_verifier": verifier})

    responses = all_at_once(10, redeem)
    assert sorted(r.status_code for r in responses) == [200] + [400] * 9
    assert all(r.json()["error"] == "invalid_grant" for r in responses if r.status_code == 400)
    winner = next(r.json() for r in responses if r.status_code == 200)
    verified = requests.get(provider.url("/api/v2/auth/verify"), timeout=10,
                            headers={"Authorization": f"Bearer {winner['access_token']}"})
    assert verified.status_code == 401  # the replays revoked the session the code opened
