"""The OpenID Connect provider and second factors: no code before the second factor, and an ID
token that says it was used (amr, acr)."""

import json
from urllib.parse import urlencode

import jwt
import pytest

from app.domain.factors import passkeys
from tests.support.accounts import OWNED
from tests.support.oidc import SITES, authorize_query, pkce, query_of, redeem
from tests.support.pages import submit
from tests.support.passkeys import add_passkey, ceremony_options
from tests.support.second_factors import code_at, enrolled_user
from tests.support.soft_authenticator import SoftAuthenticator

pytestmark = pytest.mark.app_settings("oidc")


def test_an_authorization_waits_for_the_second_factor_and_the_id_token_says_so(
        app, client, make_user, clock):
    account, secret, _codes = enrolled_user(app, make_user, clock)
    verifier = pkce()
    query = authorize_query(verifier=verifier)
    to_login = client.get("/oauth2/authorize?" + urlencode(query))
    login_path = to_login.headers["Location"]
    signed = submit(client, "/login", {"email": account.email, "password": account.password},
                    token_from=login_path)
    assert signed.headers["Location"].startswith("/login/second-factor")
    # Nothing to authorize with yet: the authorization endpoint sends the browser to log in.
    assert client.get("/oauth2/authorize?" + urlencode(query)).headers["Location"].startswith(
        "/login")
    done = submit(client, signed.headers["Location"], {"code": code_at(secret, clock)},
                  token_from="/login/second-factor")
    assert done.headers["Location"].startswith("/oauth2/authorize")
    back = client.get(done.headers["Location"])
    code = query_of(back.headers["Location"])["code"]
    tokens = redeem(client, code, verifier).get_json()
    claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
    assert claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == "aal2"
    access = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert access["acr"] == "aal2"


# Passkeys need a host name for a relying party (the default 127.0.0.1 offers none).
@pytest.mark.parametrize("settings", [{"CLIENT_SITES": SITES,
                                       "PUBLIC_URL": "http://localhost:5000"}])
def test_a_passkey_alone_answers_an_authorization_and_the_id_token_says_so(app, client,
                                                                          make_user, settings):
    """From the login page an authorization request sends the browser to, a passkey alone: back
    to the authorization with a code, and an ID token whose amr names the key."""
    origin = app.config["PUBLIC_URL"]
    with app.app_context():
        assert passkeys.available()
    account = make_user(**OWNED)
    authenticator = SoftAuthenticator()
    owner = app.test_client()
    submit(owner, "/login", {"email": account.email, "password": account.password})
    assert add_passkey(owner, authenticator, origin).status_code == 200

    verifier = pkce()
    query = authorize_query(verifier=verifier)
    login_path = client.get("/oauth2/authorize?" + urlencode(query)).headers["Location"]
    options = ceremony_options(client, "/login/passkey/options", login_path).get_json()
    signed = submit(client, "/login/passkey", {
        "credential": json.dumps(authenticator.assert_(options, origin))}, token_from=login_path)
    assert signed.headers["Location"].startswith("/oauth2/authorize")
    code = query_of(client.get(signed.headers["Location"]).headers["Location"])["code"]
    tokens = redeem(client, code, verifier).get_json()
    claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
    assert claims["amr"] == ["hwk", "mfa"] and claims["acr"] == "aal2"
