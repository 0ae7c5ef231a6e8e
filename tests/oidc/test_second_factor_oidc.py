"""The OpenID Connect provider and second factors: no code before the second factor, and an ID
token that says it was used (amr, acr)."""

from urllib.parse import urlencode

import jwt

from tests.oidc.helpers import authorize_query, pkce, query_of, redeem
from tests.support.pages import submit
from tests.support.second_factors import code_at, enrolled_user


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
