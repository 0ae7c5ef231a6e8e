"""offline_access (issue 26, item 4; OpenID Connect Core §11): any site may ask for it, as some
libraries do by default, and it is granted and said in the scope. Refresh tokens come as they do
without it: every sign-in of a site gets one. A third-party site asks the person's consent for it
as for any scope; a service client, which gets no refresh token, may not ask for it."""

from __future__ import annotations

import re

import pytest

from tests.support.admin import register
from tests.support.oidc import (
    PUBLIC,
    authorize_query,
    get_code,
    pkce,
    query_of,
    redeem,
)
from tests.support.pages import submit
from tests.unit.domain.oidc.test_authorization import OUTSIDER, _answer

pytestmark = pytest.mark.app_settings("oidc")

WITH_OFFLINE = "openid email profile offline_access"


def test_a_site_asking_for_offline_access_gets_it_and_its_refresh_token(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier, scope=WITH_OFFLINE))
    tokens = redeem(client, code, verifier).get_json()
    assert tokens["scope"] == WITH_OFFLINE and tokens["refresh_token"]
    refreshed = client.post("/oauth2/token", data={
        "grant_type": "refresh_token", "client_id": PUBLIC,
        "refresh_token": tokens["refresh_token"], "scope": "openid offline_access"})
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.get_json()["scope"] == WITH_OFFLINE and refreshed.get_json()["refresh_token"]
    userinfo = client.get("/oauth2/userinfo", headers={
        "Authorization": f"Bearer {refreshed.get_json()['access_token']}"}).get_json()
    assert set(userinfo) == {"sub", "email", "email_verified", "name"}


def test_without_it_the_refresh_token_comes_as_before(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    tokens = redeem(client, code, verifier).get_json()
    assert tokens["scope"] == "openid email profile" and tokens["refresh_token"]
    wider = client.post("/oauth2/token", data={
        "grant_type": "refresh_token", "client_id": PUBLIC,
        "refresh_token": tokens["refresh_token"], "scope": "openid offline_access"})
    assert wider.get_json()["error"] == "invalid_scope"  # not granted: a refresh cannot widen


def test_a_third_party_site_asks_consent_for_it(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    first = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), **OUTSIDER))
    assert "keep you signed in" not in first.text
    allowed = _answer(client, first, "allow")
    assert "code" in query_of(allowed.headers["Location"])
    silent = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), scope=WITH_OFFLINE, prompt="none", **OUTSIDER))
    assert query_of(silent.headers["Location"])["error"] == "consent_required"
    page = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), scope=WITH_OFFLINE, **OUTSIDER))
    assert page.status_code == 200
    assert re.search(r"outsider also asks to keep you signed in while you are away", page.text)
    allowed = _answer(client, page, "allow")
    assert "code" in query_of(allowed.headers["Location"])
    again = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), scope=WITH_OFFLINE, prompt="none", **OUTSIDER))
    assert "code" in query_of(again.headers["Location"])


def test_a_service_client_may_not_ask_for_it(app, client):
    service = register(app, "billing", "users:read")
    response = client.post("/oauth2/token", data={"grant_type": "client_credentials",
                                                  "scope": "users:read offline_access"},
                           auth=service)
    assert response.status_code == 400 and response.get_json()["error"] == "invalid_scope"


def test_the_discovery_document_lists_it(client):
    scopes = client.get("/.well-known/openid-configuration").get_json()["scopes_supported"]
    assert scopes == ["openid", "email", "profile", "offline_access"]
