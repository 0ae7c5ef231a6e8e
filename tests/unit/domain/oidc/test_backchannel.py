"""OpenID Connect Back-Channel Logout 1.0 (issue 24): when a session an OIDC client holds ends at
the service, the client's backchannel_logout_uri receives a logout token that validates with
PyJWT against the service's JWKS."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import jwt
import pytest

from tests.support.oidc import PUBLIC, PUBLIC_URI, SITES
from tests.support.oidc import signed_in_tokens as signed_in

pytestmark = pytest.mark.app_settings("events")

LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout"


@pytest.fixture
def settings(receiver):
    return {"WEBHOOK_RETRY_DELAY": 0.05, "CLIENT_SITES": {
        **SITES, PUBLIC: {**SITES[PUBLIC], "backchannel_logout_uri": f"{receiver.url}/logout"}}}


def logout_token_claims(app, client, received):
    assert received.path == "/logout"
    assert received.headers["content-type"] == "application/x-www-form-urlencoded"
    token = parse_qs(received.body.decode())["logout_token"][0]
    header = jwt.get_unverified_header(token)
    assert header["typ"] == "logout+jwt"
    keys = jwt.PyJWKSet.from_dict(json.loads(client.get("/.well-known/jwks.json").data))
    key = next(k for k in keys.keys if k.key_id == header["kid"])
    claims = jwt.decode(token, key.key, algorithms=[header["alg"]], audience=PUBLIC,
                        issuer=app.config["PUBLIC_URL"],
                        options={"require": ["iss", "aud", "iat", "exp", "jti", "events"]})
    assert claims["events"] == {LOGOUT_EVENT: {}}
    assert "nonce" not in claims
    return claims


def id_claims(id_token):
    return jwt.decode(id_token, options={"verify_signature": False})


def test_rp_initiated_logout_sends_the_client_a_logout_token(app, client, user, receiver):
    tokens = signed_in(client, user)
    response = client.get("/oauth2/logout", query_string={
        "id_token_hint": tokens["id_token"], "post_logout_redirect_uri": PUBLIC_URI})
    assert response.status_code == 302
    received = receiver.wait_for(lambda r: len(r) >= 1)
    assert len(received) == 1
    claims = logout_token_claims(app, client, received[0])
    assert claims["sid"] == id_claims(tokens["id_token"])["sid"]
    assert claims["sub"] == user.id


def test_logout_everywhere_tells_the_client_of_its_session(app, client, user, login, receiver):
    tokens = signed_in(client, user)
    first_party = login(user)
    client.post("/api/v2/auth/logout?scope=global",
                headers={"Authorization": f"Bearer {first_party['access_token']}"})
    received = receiver.wait_for(lambda r: len(r) >= 1)
    claims = logout_token_claims(app, client, received[0])
    assert (claims["sid"], claims["sub"]) == (id_claims(tokens["id_token"])["sid"], user.id)


def test_discovery_advertises_back_channel_logout(client):
    metadata = client.get("/.well-known/openid-configuration").get_json()
    assert metadata["backchannel_logout_supported"] is True
    assert metadata["backchannel_logout_session_supported"] is True
