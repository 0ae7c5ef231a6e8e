"""Property tests of the OpenID Connect provider's endpoints (hypothesis): whatever bytes arrive in
the query, the form body or the Authorization header of /oauth2/*, the answer is a refusal of
OAuth's shape (RFC 6749 JSON for the clients' endpoints, a page for the browser's), or what a
well-formed request gets; never a 5xx, never a redirect to a URI that is not the client's, and a
refused push keeps nothing. tests/unit/oidc/test_endpoints_hostile_input.py has the values that
were 500s.

Bounded as tests/system/contract/test_fuzz_parsing.py is (`SVC_FUZZ_EXAMPLES`, derandomized in CI).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest
from flask import Flask
from hypothesis import given, note
from hypothesis import strategies as st
from sqlalchemy import func, select
from werkzeug.test import TestResponse

from app.extensions import db
from app.models import HandoffCode, PushedRequest
from tests.support.apps import dispose_app
from tests.support.contract import build_contract_app
from tests.support.oidc import CONFIDENTIAL, PUBLIC, PUBLIC_URI, SECRET, SITES
from tests.system.contract.test_fuzz_parsing import ANY_TEXT, FUZZ, HEADER_TEXT, quoted

# RFC 6749 §4.1.2.1 and §5.2, RFC 7009 §2.2.1, RFC 9126 §2.3, OpenID Connect Core §3.1.2.6;
# slow_down: our 429s (pushed requests over their caps, in a long run).
OAUTH_ERRORS = {"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
                "unsupported_grant_type", "unsupported_response_type", "invalid_scope",
                "access_denied", "unsupported_token_type", "login_required",
                "consent_required", "interaction_required", "invalid_request_uri", "slow_down",
                "request_not_supported", "request_uri_not_supported"}


@pytest.fixture(scope="module")
def oidc_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    app = build_contract_app(tmp_path_factory.mktemp("oidc"), CLIENT_SITES=SITES)
    yield app
    dispose_app(app)


def stored(app: Flask) -> tuple[int, int]:
    with app.app_context():
        return (db.session.scalar(select(func.count()).select_from(PushedRequest)) or 0,
                db.session.scalar(select(func.count()).select_from(HandoffCode)) or 0)


def latin1(text: str) -> str:
    """Text as a WSGI server hands it over: its bytes (UTF-8, lone surrogates kept), decoded as
    latin-1."""
    return text.encode("utf-8", "surrogatepass").decode("latin-1")


# Strategies -----------------------------------------------------------------------------------

GOOD = {"response_type": "code", "client_id": PUBLIC, "redirect_uri": PUBLIC_URI,
        "scope": "openid email", "state": "s", "nonce": "n",
        "code_challenge": "A" * 43, "code_challenge_method": "S256",
        "grant_type": "authorization_code", "code": "c", "code_verifier": "v" * 43,
        "refresh_token": "r", "token": "t", "token_type_hint": "access_token"}
NAMES = st.sampled_from([*GOOD, "prompt", "max_age", "login_hint", "request_uri", "request",
                         "client_secret", "id_token_hint", "post_logout_redirect_uri",
                         "ui_locales", "claims"]) | st.text(max_size=10)
HOSTILE = st.one_of(ANY_TEXT, st.sampled_from(['"', "\\", "\x00", "\x1f", "\x7f", "é", "%ff",
                                               "\u2028", "x" * 9000]))


@st.composite
def params(draw: st.DrawFn) -> str:
    """A well-formed request's parameters with some of them, or others, anything at all; as a
    urlencoded string (of UTF-8, lone surrogates kept), or raw bytes."""
    chosen = dict(GOOD)
    for name, value in draw(st.lists(st.tuples(NAMES, HOSTILE | st.sampled_from(
            list(GOOD.values()))), min_size=1, max_size=4)):
        chosen[name] = value
    for name in draw(st.lists(st.sampled_from(sorted(GOOD)), max_size=4)):
        chosen.pop(name, None)
    encoded = "&".join(f"{quoted(name)}={quoted(value)}" for name, value in chosen.items())
    raw = draw(st.binary(max_size=200)).decode("latin-1")
    return draw(st.sampled_from([encoded, encoded, raw, encoded + "&" + raw]))


def basic(raw: bytes) -> str:
    return "Basic " + base64.b64encode(raw).decode()


AUTHORIZATION = st.one_of(
    st.none(),
    st.just(basic(f"{CONFIDENTIAL}:{SECRET}".encode())),
    st.binary(max_size=80).map(basic),
    st.tuples(st.sampled_from([CONFIDENTIAL, PUBLIC]), ANY_TEXT).map(
        lambda pair: basic(f"{pair[0]}:{pair[1]}".encode("utf-8", "surrogatepass"))),
    HEADER_TEXT.map("Basic {}".format),
    HEADER_TEXT,
)


def assert_oauth_json(response: TestResponse, allowed: set[int]) -> None:
    """An allowed status; a refusal is RFC 6749 JSON with a known error, never cached."""
    text = response.get_data(as_text=True)
    assert response.status_code in allowed, f"{response.status_code}: {text[:500]}"
    if response.status_code >= 400:
        assert response.mimetype == "application/json", (response.mimetype, text[:500])
        assert response.get_json()["error"] in OAUTH_ERRORS, text[:500]
        assert "Location" not in response.headers


def assert_page_or_back_to_the_client(response: TestResponse, allowed: set[int],
                                      to: tuple[str, ...]) -> None:
    text = response.get_data(as_text=True)
    assert response.status_code in allowed, f"{response.status_code}: {text[:500]}"
    if response.status_code == 302:
        assert response.headers["Location"].startswith(to), response.headers["Location"]
    elif response.status_code >= 400:
        assert response.mimetype == "text/html" and "Location" not in response.headers


# Properties -----------------------------------------------------------------------------------

@FUZZ
@given(query=params(), method=st.sampled_from(["GET", "POST"]))
def test_any_authorization_request_is_a_page_or_goes_back_only_to_the_client(
        oidc_app: Flask, query: str, method: str) -> None:
    """Signed out: to the sign-in page, to the registered redirect URI with an error, or a
    page (a POST has no CSRF token: a page)."""
    before = stored(oidc_app)
    note(f"{method} /oauth2/authorize?{latin1(query)!r}")
    response = oidc_app.test_client().open("/oauth2/authorize", method=method,
                                           query_string=latin1(query))
    assert_page_or_back_to_the_client(response, {302, 400},
                                      ("/login", "/signup", PUBLIC_URI + "?"))
    assert stored(oidc_app) == before


@FUZZ
@given(path=st.sampled_from(["/oauth2/par", "/oauth2/token", "/oauth2/revoke",
                             "/oauth2/introspect"]),
       body=params(), authorization=AUTHORIZATION)
def test_any_client_request_is_answered_in_oauths_json(oidc_app: Flask, path: str, body: str,
                                                       authorization: str | None) -> None:
    before = stored(oidc_app)
    note(f"POST {path} Authorization: {authorization!r} {latin1(body)!r}")
    response = oidc_app.test_client().post(
        path, data=body.encode("utf-8", "surrogatepass"),
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": authorization} if authorization is not None else {})
    assert_oauth_json(response, {200, 201, 400, 401, 413, 429})
    if response.status_code >= 400:
        assert stored(oidc_app) == before  # a refused push keeps nothing
    if response.status_code == 401 and response.get_json()["error"] == "invalid_client" \
            and (authorization or "").startswith("Basic "):
        assert response.headers["WWW-Authenticate"].startswith("Basic ")


@FUZZ
@given(authorization=st.one_of(HEADER_TEXT.map("Bearer {}".format), HEADER_TEXT),
       method=st.sampled_from(["GET", "POST"]))
def test_any_userinfo_request_is_a_401(oidc_app: Flask, authorization: str,
                                       method: str) -> None:
    note(f"{method} /oauth2/userinfo Authorization: {authorization!r}")
    response = oidc_app.test_client().open("/oauth2/userinfo", method=method,
                                           headers={"Authorization": authorization})
    assert response.status_code == 401, response.get_data(as_text=True)[:500]
    assert response.get_json()["error"] == "invalid_token"


@FUZZ
@given(query=params(), method=st.sampled_from(["GET", "POST"]))
def test_any_logout_request_is_a_page_or_goes_back_only_to_the_client(oidc_app: Flask,
                                                                       query: str,
                                                                       method: str) -> None:
    note(f"{method} /oauth2/logout?{latin1(query)!r}")
    response = oidc_app.test_client().open("/oauth2/logout", method=method,
                                           query_string=latin1(query))
    assert_page_or_back_to_the_client(response, {200, 302, 400}, ("https://ledger.example/bye",))


@FUZZ
@given(path=st.sampled_from(["/.well-known/openid-configuration", "/.well-known/jwks.json"]),
       query=params())
def test_the_metadata_ignores_any_query(oidc_app: Flask, path: str, query: str) -> None:
    response = oidc_app.test_client().get(path, query_string=latin1(query))
    assert response.status_code == 200 and response.is_json
