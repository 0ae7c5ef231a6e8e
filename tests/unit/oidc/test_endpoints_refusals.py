"""What a certification suite checks an OpenID Connect provider refuses (issue 15, "Tests that
prove it"), through the test client."""

from __future__ import annotations

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.oidc import (
    CONFIDENTIAL,
    CONFIDENTIAL_URI,
    PUBLIC,
    PUBLIC_URI,
    SECRET,
    SITES,
    authorize_query,
    get_code,
    pkce,
    query_of,
    redeem,
)
from tests.support.pages import submit
from tests.support.settings import change_settings

pytestmark = pytest.mark.app_settings("oidc")


@pytest.mark.parametrize("near_miss", [
    "https://notes.example/cb/", "https://notes.example/CB", "https://notes.example.evil/cb",
    "https://notes.example@evil.example/cb", "//evil.example/cb", "http://notes.example/cb",
    "https://notes.example/cb?x=1", "https://notes.example/cb/../cb", "https://evil.example/cb",
])
def test_an_unregistered_or_near_miss_redirect_uri_gets_a_page_and_no_redirect(client,
                                                                               near_miss):
    response = client.get("/oauth2/authorize", query_string=authorize_query(
        redirect_uri=near_miss, verifier=pkce()))
    assert response.status_code == 400 and "Location" not in response.headers
    assert response.mimetype == "text/html"


def test_an_unknown_client_gets_no_redirect(client):
    response = client.get("/oauth2/authorize", query_string=authorize_query(
        client_id="nobody", verifier=pkce()))
    assert response.status_code == 400 and "Location" not in response.headers


def test_a_public_client_without_pkce_or_with_plain_is_refused_at_its_redirect_uri(client):
    missing = client.get("/oauth2/authorize", query_string=authorize_query())
    assert query_of(missing.headers["Location"])["error"] == "invalid_request"
    plain = client.get("/oauth2/authorize", query_string=authorize_query(
        code_challenge="a" * 43, code_challenge_method="plain"))
    assert query_of(plain.headers["Location"])["error"] == "invalid_request"
    for bad in ("a" * 42, "a" * 44, "a" * 42 + "~", "a" * 128):
        not_s256 = client.get("/oauth2/authorize", query_string=authorize_query(
            code_challenge=bad, code_challenge_method="S256"))
        assert query_of(not_s256.headers["Location"])["error"] == "invalid_request", bad


@pytest.mark.parametrize(("extra", "error"), [
    ({"nonce": "n" * 256}, "invalid_request"),
    ({"nonce": "a\x00b"}, "invalid_request"),  # PostgreSQL's text cannot keep it: was a 500
    ({"nonce": "caf\u00e9"}, "invalid_request"),
    ({"response_type": "token"}, "unsupported_response_type"),
    ({"response_type": "code id_token"}, "unsupported_response_type"),
    ({"scope": "openid admin"}, "invalid_scope"),
])
def test_an_unknown_response_type_or_scope_is_refused(client, extra, error):
    response = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), **extra))
    assert response.status_code == 302
    back = query_of(response.headers["Location"])
    assert back["error"] == error and back["state"] == "st-1" and "code" not in back


@pytest.mark.parametrize("extra", [
    {"nonce": "a\x00b"}, {"nonce": "n" * 256},  # were a 500 when the code was stored
    {"max_age": "\u00b2"}, {"max_age": "1\u00b9"},  # str.isdigit() is true for them: a 500
])
def test_a_bad_nonce_without_a_scope_or_a_max_age_of_other_digits_is_refused(client, user,
                                                                             extra):
    submit(client, "/login", {"email": user.email, "password": user.password})
    query = authorize_query(verifier=pkce(), **extra)
    del query["scope"]  # the client's default scope, openid among it
    response = client.get("/oauth2/authorize", query_string=query)
    assert response.status_code == 302, response.text
    back = query_of(response.headers["Location"])
    assert back["error"] == "invalid_request" and back["state"] == "st-1" and "code" not in back


def _error(response):
    return response.status_code, response.get_json()["error"]


def test_a_wrong_verifier_or_none_is_refused_and_burns_the_code(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    assert _error(redeem(client, code, pkce())) == (400, "invalid_grant")
    assert _error(redeem(client, code, verifier)) == (400, "invalid_grant")  # burned
    code = get_code(client, user, authorize_query(verifier=verifier))
    assert _error(redeem(client, code, None)) == (400, "invalid_request")


def test_a_replayed_code_is_refused_and_revokes_what_it_issued(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    first = redeem(client, code, verifier).get_json()
    assert _error(redeem(client, code, verifier)) == (400, "invalid_grant")
    verified = client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {first['access_token']}"})
    assert verified.status_code == 401
    refreshed = client.post("/oauth2/token", data={
        "grant_type": "refresh_token", "client_id": PUBLIC,
        "refresh_token": first["refresh_token"]})
    assert _error(refreshed) == (400, "invalid_grant")


def test_an_expired_code_is_refused(client, user, clock):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    clock.advance(61)
    assert _error(redeem(client, code, verifier)) == (400, "invalid_grant")


def test_a_code_is_bound_to_its_redirect_uri_and_its_client(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    assert _error(redeem(client, code, verifier, redirect_uri=CONFIDENTIAL_URI)) == \
        (400, "invalid_grant")
    code = get_code(client, user, authorize_query(verifier=verifier))
    stolen = redeem(client, code, verifier, client_id=CONFIDENTIAL, redirect_uri=PUBLIC_URI,
                    auth=(CONFIDENTIAL, SECRET))
    assert _error(stolen) == (400, "invalid_grant")
    assert _error(redeem(client, code, verifier)) == (400, "invalid_grant")  # burned


def test_a_confidential_client_must_prove_its_secret(client, user):
    query = authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI)
    code = get_code(client, user, query)  # PKCE is optional for a confidential client
    wrong = redeem(client, code, None, CONFIDENTIAL, CONFIDENTIAL_URI, auth=(CONFIDENTIAL, "no"))
    assert _error(wrong) == (401, "invalid_client")
    as_public = redeem(client, code, None, CONFIDENTIAL, CONFIDENTIAL_URI)
    assert _error(as_public) == (401, "invalid_client")
    code = get_code(client, user, query)
    right = redeem(client, code, None, CONFIDENTIAL, CONFIDENTIAL_URI, auth=(CONFIDENTIAL, SECRET))
    assert right.status_code == 200, right.text


def test_an_id_token_hint_from_another_issuer_signs_nobody_out_and_redirects_nowhere(client,
                                                                                     user):
    get_code(client, user, authorize_query(verifier=pkce()))
    foreign = jwt.encode({"iss": "https://evil.example", "sub": user.id, "aud": PUBLIC,
                          "sid": "x", "iat": 1, "exp": 2**31},
                         ec.generate_private_key(ec.SECP256R1()), algorithm="ES256",
                         headers={"kid": "evil"})
    response = client.get("/oauth2/logout", query_string={
        "id_token_hint": foreign, "post_logout_redirect_uri": PUBLIC_URI})
    assert response.status_code == 400 and "Location" not in response.headers
    assert client.get("/account").status_code == 200  # still signed in


def test_the_token_endpoint_answers_rfc_6749_json(client):
    response = client.post("/oauth2/token", data={"grant_type": "password", "client_id": PUBLIC})
    assert _error(response) == (400, "unsupported_grant_type")
    assert response.headers["Cache-Control"] == "no-store"
    assert "error_description" in response.get_json() or response.get_json()["error"]


def test_a_refresh_may_not_widen_its_scope(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier, scope="openid email"))
    refresh_token = redeem(client, code, verifier).get_json()["refresh_token"]
    wider = client.post("/oauth2/token", data={
        "grant_type": "refresh_token", "client_id": PUBLIC, "refresh_token": refresh_token,
        "scope": "openid email profile"})
    assert _error(wider) == (400, "invalid_scope")
    same = client.post("/oauth2/token", data={
        "grant_type": "refresh_token", "client_id": PUBLIC, "refresh_token": refresh_token,
        "scope": "openid"})
    assert same.status_code == 200 and same.get_json()["scope"] == "openid email"



class TestWithLimits:
    @pytest.fixture
    def settings(self):
        return {"CLIENT_SITES": SITES, "RATELIMIT_ENABLED": True, "LIMIT_SSO": "3 per minute"}

    def test_single_sign_on_codes_are_limited_per_browser_session(self, client, user):
        get_code(client, user, authorize_query(verifier=pkce()))  # the first code of three
        answers = [client.get("/oauth2/authorize", query_string=authorize_query(
            verifier=pkce())) for _ in range(3)]
        assert [a.status_code for a in answers] == [302, 302, 429]
        assert answers[2].mimetype == "text/html" and "Retry-After" in answers[2].headers
        assert "Location" not in answers[2].headers


def test_a_clients_code_is_no_handoff_code_and_a_handoff_code_is_no_clients(client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    exchanged = client.post("/api/v2/auth/exchange-code", json={
        "code": code, "provider": "password", "code_verifier": verifier.verifier})
    assert exchanged.status_code == 401 and exchanged.get_json()["code"] == "invalid_code"
    handoff = client.get("/login", query_string={
        "redirect_uri": PUBLIC_URI, "code_challenge": verifier.challenge,
        "code_challenge_method": "S256"})
    handoff_code = query_of(handoff.headers["Location"])["code"]
    assert _error(redeem(client, handoff_code, verifier)) == (400, "invalid_grant")



def test_a_browser_signed_in_before_email_confirmation_was_required_gets_no_code(app, client,
                                                                                user):
    get_code(client, user, authorize_query(verifier=pkce()))
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    response = client.get("/oauth2/authorize", query_string=authorize_query(verifier=pkce()))
    assert response.status_code == 403 and "Location" not in response.headers
    assert response.mimetype == "text/html"


class TestTokenEndpointLimits:
    @pytest.fixture
    def settings(self):
        return {"CLIENT_SITES": SITES, "RATELIMIT_ENABLED": True,
                "LIMIT_OIDC_TOKEN": "2 per minute"}

    def test_the_clients_endpoints_are_limited_per_address(self, client):
        answers = [client.post("/oauth2/token", data={"grant_type": "refresh_token",
                                                      "client_id": PUBLIC, "refresh_token": "x"})
                   for _ in range(2)]
        answers.append(client.post("/oauth2/revoke", data={"token": "x", "client_id": PUBLIC}))
        answers.append(client.post("/oauth2/par", data=authorize_query(verifier=pkce())))
        assert [a.status_code for a in answers] == [400, 400, 429, 429]
        assert answers[2].get_json() == answers[3].get_json() == {"error": "slow_down"}
        assert "Retry-After" in answers[2].headers and "Retry-After" in answers[3].headers
