"""The authorization code flow with PKCE, end to end through the test client (issue 15, items
2 to 4): the hosted login, single sign-on, the tokens and their claims, userinfo, refresh."""

from __future__ import annotations

import jwt
import pytest

from tests.support.oidc import (
    PUBLIC,
    authorize_query,
    get_code,
    pkce,
    query_of,
    redeem,
    token_request,
)

pytestmark = pytest.mark.app_settings("oidc")


def _id_claims(app, client, id_token, audience=PUBLIC):
    jwks = client.get("/.well-known/jwks.json").get_json()
    key = jwt.PyJWK(jwks["keys"][0])
    return jwt.decode(id_token, key.key, algorithms=[key.algorithm_name], audience=audience,
                      issuer=app.config["PUBLIC_URL"])


def test_a_public_client_signs_a_person_in_through_the_hosted_login(app, client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    response = redeem(client, code, verifier)
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.get_json()
    assert body["token_type"] == "Bearer" and body["scope"] == "openid email profile"
    claims = _id_claims(app, client, body["id_token"])
    assert claims["sub"] == user.id and claims["aud"] == PUBLIC and claims["nonce"] == "n-1"
    assert claims["email"] == user.email and claims["amr"] == ["pwd"]
    assert {"auth_time", "at_hash", "sid", "iat", "exp"} <= claims.keys()
    # The access token is the service's own: /verify takes it, and it says whose it is.
    access = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert access["client_id"] == PUBLIC and access["scope"] == "openid email profile"
    assert access["aud"] == app.config["JWT_AUDIENCE"]
    verified = client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {body['access_token']}"})
    assert verified.status_code == 200
    info = client.get("/oauth2/userinfo",
                      headers={"Authorization": f"Bearer {body['access_token']}"})
    assert info.get_json() == {"sub": user.id, "email": user.email, "email_verified": False,
                               "name": "Ada"}


def test_a_signed_in_browser_gets_a_code_at_once_and_prompt_login_asks_again(app, client, user,
                                                                               clock):
    get_code(client, user, authorize_query(verifier=pkce()))
    again = client.get("/oauth2/authorize?" + "&".join(
        f"{k}={v}" for k, v in authorize_query(verifier=pkce()).items()))
    assert again.status_code == 302 and "code=" in again.headers["Location"]  # single sign-on
    clock.advance(5)
    forced = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), prompt="login"))
    assert forced.status_code == 302 and forced.headers["Location"] == "/login?prompt=login"
    clock.advance(5)
    old = client.get("/oauth2/authorize", query_string=authorize_query(verifier=pkce(),
                                                                       max_age="3"))
    assert old.headers["Location"] == "/login?prompt=login"


def test_prompt_none_when_signed_out_answers_login_required(client):
    response = client.get("/oauth2/authorize",
                          query_string=authorize_query(verifier=pkce(), prompt="none"))
    assert response.status_code == 302
    assert query_of(response.headers["Location"]) == {"error": "login_required",
                                                      "state": "st-1"}


def test_refresh_rotates_with_reuse_detection_for_its_client_only(client, user):
    verifier = pkce()
    body = redeem(client, get_code(client, user, authorize_query(verifier=verifier)),
                  verifier).get_json()
    refreshed = token_request(client, {"grant_type": "refresh_token", "client_id": PUBLIC,
                                       "refresh_token": body["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.get_json()["refresh_token"] != body["refresh_token"]
    # The API's refresh does not take a client's token.
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": refreshed.get_json()["refresh_token"]}
                       ).status_code == 401


def test_a_refresh_token_reused_after_the_grace_window_ends_the_session(client, user, clock):
    verifier = pkce()
    body = redeem(client, get_code(client, user, authorize_query(verifier=verifier)),
                  verifier).get_json()
    first = {"grant_type": "refresh_token", "client_id": PUBLIC,
             "refresh_token": body["refresh_token"]}
    successor = token_request(client, first).get_json()
    assert token_request(client, first).get_json()["refresh_token"] == \
        successor["refresh_token"]  # within the grace window: the same successor
    clock.advance(11)
    reused = token_request(client, first)
    assert reused.status_code == 400 and reused.get_json()["error"] == "invalid_grant"
    assert token_request(client, {**first, "refresh_token": successor["refresh_token"]}
                         ).status_code == 400  # the whole session ended


def test_max_age_zero_is_satisfied_by_the_sign_in_it_asked_for(client, user, clock):
    from tests.support.oidc import sign_in_through
    get_code(client, user, authorize_query(verifier=pkce()))
    clock.advance(30)
    asked = client.get("/oauth2/authorize", query_string=authorize_query(verifier=pkce(),
                                                                         max_age="0"))
    assert asked.headers["Location"] == "/login?prompt=login"
    clock.advance(2)  # the sign-in takes a while: it still answers this request
    back = sign_in_through(client, asked, user)
    assert back.status_code == 302 and "code=" in back.headers["Location"]


def test_login_hint_fills_in_the_address_on_the_login_form(client):
    asked = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), login_hint='ada@example.com"><b>'))
    assert asked.headers["Location"].startswith("/login?login_hint=")
    page = client.get(asked.headers["Location"]).text
    assert 'value="ada@example.com&#34;&gt;&lt;b&gt;"' in page or \
        'value="ada@example.com&quot;&gt;&lt;b&gt;"' in page
