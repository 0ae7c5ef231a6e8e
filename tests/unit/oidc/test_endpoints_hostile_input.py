"""Hostile characters at the OpenID Connect provider's endpoints (issue 21, finding 4): quotes,
backslashes, control and non-ASCII characters, lone percent-encodings and very long values in
each parameter, and Basic credentials that are not UTF-8, are refused in OAuth's shape (a page or
a redirect to the checked redirect URI at the authorization endpoint, RFC 6749 JSON at the
clients' endpoints), never a 500, and a refused request stores nothing.
tests/system/contract/test_fuzz_oauth.py fuzzes the same endpoints with any bytes."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import HandoffCode, PushedRequest
from tests.support.oidc import (
    CONFIDENTIAL,
    CONFIDENTIAL_URI,
    PUBLIC,
    PUBLIC_URI,
    SECRET,
    authorize_query,
    pkce,
    query_of,
)
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("oidc")

# Each as it stands in a query string or a form body: the text's UTF-8 percent-encoded, and
# percent-encodings that decode to no UTF-8 at all (werkzeug reads them as U+FFFD).
HOSTILE = {
    "quote": quote('"'), "backslash": quote("\\"), "nul": "%00", "control": "%1F",
    "newline": "%0A", "delete": "%7F", "non-ascii": quote("café"), "line-separator": "%E2%80%A8",
    "quoted-then-quote": quote('code"'), "lone-ff": "%ff", "truncated-utf-8": "%C3",
    "lone-percent": "%", "bad-percent": "%zz", "long": "x" * 5000,
}
AUTHORIZE_PARAMS = ["response_type", "client_id", "redirect_uri", "scope", "state", "nonce",
                    "code_challenge", "code_challenge_method", "prompt", "max_age",
                    "login_hint", "request_uri", "response_mode", "claims", "request"]


def encoded(params: dict[str, str], name: str, raw: str) -> str:
    """`params` urlencoded, with `name` set to `raw` as it stands (already encoded)."""
    pairs = [f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in params.items() if k != name]
    return "&".join([*pairs, f"{name}={raw}"])


def stored(app) -> tuple[int, int]:
    with app.app_context():
        return (db.session.scalar(select(func.count()).select_from(PushedRequest)),
                db.session.scalar(select(func.count()).select_from(HandoffCode)))


def assert_page(response):
    assert response.status_code == 400, response.text
    assert response.mimetype == "text/html" and "Location" not in response.headers


def assert_oauth_json(response, status: int | set[int], error: str | set[str]):
    statuses = {status} if isinstance(status, int) else status
    errors = {error} if isinstance(error, str) else error
    assert response.status_code in statuses, response.text
    assert response.mimetype == "application/json" and "Location" not in response.headers
    assert response.get_json()["error"] in errors, response.text
    assert response.headers["Cache-Control"] == "no-store"


def basic(raw: bytes) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(raw).decode()}


# The authorization endpoint and the push: what the finding named --------------------------------

@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_redirect_uri_gets_a_page_and_is_not_pushed(app, client, raw):
    """It is no client's, so nothing goes back to it: a page, or RFC 6749 JSON to the push.
    Quotes, backslashes, control and non-ASCII characters were a 500 (authlib echoed the URI
    in an error description, which may not hold them)."""
    query = encoded(authorize_query(verifier=pkce()), "redirect_uri", raw)
    assert_page(client.get("/oauth2/authorize?" + query))
    assert_page(client.get("/oauth2/authorize?" + encoded(
        authorize_query(verifier=pkce()), "redirect_uri", quote(PUBLIC_URI, safe="") + raw)))
    pushed = client.post("/oauth2/par", data=query,
                         content_type="application/x-www-form-urlencoded")
    assert_oauth_json(pushed, 400, "invalid_request")
    assert stored(app) == (0, 0)


@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_response_type_is_unsupported_at_the_clients_redirect_uri(app, client, user,
                                                                            raw):
    """As any response type but code: back to the (registered) redirect URI with the error and
    the state, signed in or not; RFC 6749 JSON to the push. Was a 500."""
    query = encoded(authorize_query(verifier=pkce()), "response_type", raw)
    for signed_in in (False, True):
        if signed_in:
            submit(client, "/login", {"email": user.email, "password": user.password})
        response = client.get("/oauth2/authorize?" + query)
        assert response.status_code == 302, response.text
        assert response.headers["Location"].startswith(PUBLIC_URI + "?")
        back = query_of(response.headers["Location"])
        assert back["error"] == "unsupported_response_type" and back["state"] == "st-1"
        assert "code" not in back
    # Not back to a redirect URI that is not the client's.
    assert_page(client.get("/oauth2/authorize?" + encoded(authorize_query(
        verifier=pkce(), redirect_uri="https://evil.example/cb"), "response_type", raw)))
    pushed = client.post("/oauth2/par", data=query,
                         content_type="application/x-www-form-urlencoded")
    assert_oauth_json(pushed, 400, "unsupported_response_type")
    assert stored(app) == (0, 0)


# Every parameter ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", AUTHORIZE_PARAMS)
@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
def test_a_hostile_value_in_any_authorization_parameter_is_no_500(app, client, user, name,
                                                                  signed_in):
    """A page, the sign-in, or back to the registered redirect URI (with a code when the value
    does not matter, as a state or a login hint may be anything); a refusal stores no code."""
    if signed_in:
        submit(client, "/login", {"email": user.email, "password": user.password})
    for label, raw in HOSTILE.items():
        codes = stored(app)[1]
        response = client.get("/oauth2/authorize?" + encoded(authorize_query(verifier=pkce()),
                                                             name, raw))
        assert response.status_code in (302, 400), (label, response.status_code, response.text)
        if response.status_code == 400:
            assert_page(response)
            assert stored(app)[1] == codes, label
            continue
        location = response.headers["Location"]
        assert location.startswith((PUBLIC_URI + "?", "/login", "/signup")), (label, location)
        if "error" in query_of(location) or not location.startswith(PUBLIC_URI):
            assert stored(app)[1] == codes, label


@pytest.mark.parametrize("name", [n for n in AUTHORIZE_PARAMS if n != "request_uri"])
def test_a_hostile_value_in_any_pushed_parameter_is_refused_in_json_or_kept(app, client, name):
    """201 when the value may be anything (a state, a login hint); otherwise RFC 6749 JSON and
    nothing kept."""
    for label, raw in HOSTILE.items():
        before = stored(app)
        response = client.post("/oauth2/par", data=encoded(authorize_query(verifier=pkce()),
                                                           name, raw),
                               content_type="application/x-www-form-urlencoded")
        assert response.status_code in (201, 400, 401), (label, response.text)
        if response.status_code != 201:
            assert_oauth_json(response, {400, 401},
                              {"invalid_request", "invalid_client", "invalid_scope",
                               "unsupported_response_type", "request_not_supported"})
            assert stored(app) == before, label


# What the provider does not do (app/oidc/unsupported.py): its documented refusal, whatever
# the value, and never a 500. A request_uri of the pushed form that is no live one is a page.
UNSUPPORTED = {"request": "request_not_supported", "request_uri": "request_uri_not_supported",
               "response_mode": "invalid_request"}


@pytest.mark.parametrize(("name", "error"), UNSUPPORTED.items(), ids=UNSUPPORTED.keys())
def test_a_hostile_unsupported_parameter_gets_its_documented_refusal(app, client, user, name,
                                                                     error):
    submit(client, "/login", {"email": user.email, "password": user.password})
    cases = {**HOSTILE, "pushed-prefix": quote("urn:ietf:params:oauth:request_uri:") + "%00",
             "jwt-with-nul": "eyJ.e30.%00"}
    for label, raw in cases.items():
        response = client.get("/oauth2/authorize?" + encoded(authorize_query(verifier=pkce()),
                                                             name, raw))
        if label == "pushed-prefix" and name == "request_uri":  # looked up, found nowhere
            assert_page(response)
            continue
        assert response.status_code == 302, (label, response.text)
        assert response.headers["Location"].startswith(PUBLIC_URI + "?"), label
        back = query_of(response.headers["Location"])
        assert back["error"] == error and back["state"] == "st-1", label
        if name != "request_uri":
            pushed = client.post("/oauth2/par", data=encoded(authorize_query(verifier=pkce()),
                                                             name, raw),
                                 content_type="application/x-www-form-urlencoded")
            assert_oauth_json(pushed, 400, error)
    assert stored(app) == (0, 0)


TOKEN_REQUESTS = {
    "authorization_code": {"grant_type": "authorization_code", "client_id": PUBLIC,
                           "code": "c", "redirect_uri": PUBLIC_URI, "code_verifier": "v" * 43},
    "refresh_token": {"grant_type": "refresh_token", "client_id": PUBLIC, "refresh_token": "r",
                      "scope": "openid"},
    "client_credentials": {"grant_type": "client_credentials", "client_id": CONFIDENTIAL,
                           "client_secret": SECRET},
}
CLIENT_ENDPOINTS = {
    "/oauth2/revoke": {"token": "t", "token_type_hint": "access_token", "client_id": PUBLIC},
    "/oauth2/introspect": {"token": "t", "token_type_hint": "refresh_token",
                           "client_id": CONFIDENTIAL, "client_secret": SECRET},
}
FORMS = [("/oauth2/token", body, name) for body in TOKEN_REQUESTS.values() for name in body] + [
    (path, body, name) for path, body in CLIENT_ENDPOINTS.items() for name in body]


@pytest.mark.parametrize(("path", "body", "name"), FORMS,
                         ids=[f"{p}-{b.get('grant_type', '')}-{n}" for p, b, n in FORMS])
def test_a_hostile_value_in_any_client_parameter_is_refused_in_json(client, path, body, name):
    """The token, revocation and introspection endpoints: RFC 6749 JSON (RFC 7009 answers 200 to
    a token it does not know, and RFC 7662 says `active: false`)."""
    for label, raw in HOSTILE.items():
        response = client.post(path, data=encoded(body, name, raw),
                               content_type="application/x-www-form-urlencoded")
        if response.status_code == 200:
            assert path != "/oauth2/token", label
            assert response.get_json() in ({}, {"active": False}), label
            continue
        assert_oauth_json(response, {400, 401},
                          {"invalid_request", "invalid_client", "invalid_grant",
                           "unsupported_grant_type", "unauthorized_client", "invalid_scope",
                           "unsupported_token_type"})


# Basic credentials -------------------------------------------------------------------------------

BAD_BASIC = {
    "not-utf-8-id": basic(b"\xff\xfe:" + SECRET.encode()),
    "not-utf-8-secret": basic(CONFIDENTIAL.encode() + b":\xff"),
    "latin-1-secret": basic(f"{CONFIDENTIAL}:{SECRET}é".encode("latin-1")),
    "no-colon-not-utf-8": basic(b"\xc3"),
    "not-ascii-header": {"Authorization": "Basic é"},  # not base64 at all: a str b64decode refuses
}


@pytest.mark.parametrize("path", ["/oauth2/token", "/oauth2/par", "/oauth2/revoke",
                                  "/oauth2/introspect"])
@pytest.mark.parametrize("headers", BAD_BASIC.values(), ids=BAD_BASIC.keys())
def test_basic_credentials_that_are_not_utf_8_fail_the_clients_authentication(app, client, path,
                                                                              headers):
    """The client tried the Authorization header and failed: 401 invalid_client with
    WWW-Authenticate (RFC 6749 §5.2), as a wrong secret. Was a 500 (UnicodeDecodeError)."""
    body = {"grant_type": "client_credentials", "token": "t",
            **authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI)}
    response = client.post(path, data=body, headers=headers)
    assert_oauth_json(response, 401, "invalid_client")
    assert response.headers["WWW-Authenticate"].startswith("Basic ")
    assert stored(app) == (0, 0)


# The other endpoints -----------------------------------------------------------------------------

@pytest.mark.parametrize("raw", HOSTILE.values(), ids=HOSTILE.keys())
def test_a_hostile_bearer_token_at_userinfo_is_a_401(client, raw):
    for method in ("GET", "POST"):
        response = client.open("/oauth2/userinfo", method=method,
                               headers={"Authorization": "Bearer " + raw + "é\x7f"})
        assert response.status_code == 401 and response.get_json()["error"] == "invalid_token"


@pytest.mark.parametrize("name", ["id_token_hint", "post_logout_redirect_uri", "client_id",
                                  "state", "ui_locales", "logout_hint"])
def test_a_hostile_value_at_logout_is_a_page(client, user, name):
    submit(client, "/login", {"email": user.email, "password": user.password})
    for label, raw in HOSTILE.items():
        response = client.get("/oauth2/logout?" + encoded({"client_id": CONFIDENTIAL}, name,
                                                          raw))
        assert response.status_code in (200, 400), (label, response.text)
        assert response.mimetype == "text/html" and "Location" not in response.headers


@pytest.mark.parametrize("path", ["/.well-known/openid-configuration", "/.well-known/jwks.json"])
def test_the_metadata_ignores_a_hostile_query(client, path):
    for raw in HOSTILE.values():
        response = client.get(f"{path}?x={raw}&{raw}")
        assert response.status_code == 200 and response.is_json
