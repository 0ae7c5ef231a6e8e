"""Property tests of the token and input parsing (hypothesis): whatever arrives as a bearer token,
a refresh token, a reset token, a handoff code, an email, a password, a body or a query string,
the answer is one of the documented refusals, as a problem body, and nothing raises past the error
layer (no 500, no HTML error page from the API).

Bounded: `SVC_FUZZ_EXAMPLES` examples per property (default below), no deadline, derandomized when
`CI` is set. A longer run:

    SVC_FUZZ_EXAMPLES=2000 .venv/bin/pytest -q tests/system/contract/test_fuzz_parsing.py

(schemathesis, installed alongside, makes Hypothesis print a failing example's arguments as
blanks, so each test `note()`s what it sent: look for the lines after "Failing test case".)
"""

from __future__ import annotations

import contextlib
import json
import os
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import jwt
import pytest
from flask import Flask
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError
from werkzeug.test import TestResponse

from app.api import schemas
from app.domain.services import services
from app.domain.tokens.errors import InvalidToken, TokenExpired
from app.web.converters import RESERVED
from tests.support.apps import dispose_app, drained
from tests.support.contract import IN_CI, SITE_REDIRECT_URI, build_contract_app
from tests.support.encoding import b64url as _b64

EXAMPLES = int(os.environ.get("SVC_FUZZ_EXAMPLES", "200"))
# Locally, failures are kept in Hypothesis's example database (.hypothesis/, which ignores itself
# in git) and replayed first on the next run. `too_slow` is about drawing the data, and here the
# machine may be busy with other test runs: how fast examples are drawn is not under test.
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=IN_CI,
                suppress_health_check=[HealthCheck.too_slow])

PROBLEM_KEYS = {"type", "title", "status", "code", "detail"}
STRONG_PASSWORD = "a long and quite unguessable passphrase"


def assert_refused(response: TestResponse, allowed: set[int]) -> dict[str, Any]:
    """The status is one of `allowed`; a 4xx is a problem body whose `status` is the status."""
    text = response.get_data(as_text=True)
    assert response.status_code in allowed, f"{response.status_code}: {text[:500]}"
    if response.status_code < 400:
        return {}
    assert response.mimetype == "application/problem+json", (response.mimetype, text[:500])
    problem = response.get_json()
    assert isinstance(problem, dict) and problem.keys() >= PROBLEM_KEYS, problem
    assert problem["status"] == response.status_code, problem
    return problem


def post(app: Flask, path: str, body: Any) -> TestResponse:
    note(f"POST {path} {body!r}")
    return app.test_client().post(path, json=body)


# Strategies -----------------------------------------------------------------------------------

# Every `str`: lone surrogates included (JSON's "\ud800" escapes decode to them), and every byte
# string as a WSGI server hands it over (decoded as latin-1).
ANY_TEXT = st.one_of(
    st.text(),
    st.text(st.characters(exclude_categories=())),
    st.lists(st.sampled_from(["\ud800", "\udfff", "\x00", "é", ".", "=", "eyJ", " ", "a"]),
             min_size=1).map("".join),
    st.binary().map(lambda raw: raw.decode("latin-1")),
)
# What an HTTP header value may carry: VCHAR, SP, HTAB and obs-text (RFC 9110, section 5.5).
HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF,
                                    exclude_characters="\x7f") | st.just("\t"))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                  max_size=4),
    max_leaves=12,
)


@st.composite
def jwt_shaped(draw: st.DrawFn) -> str:
    """Three base64url segments: a header and a payload that are JSON (or not), any signature."""
    parts = [draw(JSON.map(lambda value: json.dumps(value).encode()) | st.binary(max_size=64))
             for _ in range(2)]
    return ".".join([_b64(parts[0]), _b64(parts[1]), _b64(draw(st.binary(max_size=80)))])


ISSUER, AUDIENCE = "<the app's issuer>", "<the app's audience>"  # filled in by sign()
NOW = int(datetime.now(UTC).timestamp())
TIMES = st.one_of(st.integers(NOW - 7200, NOW + 7200), st.integers(), JSON)


@st.composite
def claims_and_header(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """Claims and header fields for a token signed with the service's own key: each claim
    plausible, absent or anything at all, so that what comes after the signature check sees
    every shape."""
    plausible: dict[str, st.SearchStrategy[Any]] = {
        "iss": st.just(ISSUER), "aud": st.just(AUDIENCE), "sub": st.text(max_size=40),
        "sid": st.text(max_size=40), "plan": st.just("free"), "jti": st.text(max_size=30),
        "iat": TIMES, "nbf": TIMES, "exp": TIMES,
    }
    claims: dict[str, Any] = {}
    for name, strategy in plausible.items():
        choice = draw(st.sampled_from(["plausible", "plausible", "absent", "anything"]))
        if choice != "absent":
            claims[name] = draw(strategy if choice == "plausible" else JSON)
    claims.update(draw(st.dictionaries(st.text(max_size=8), JSON, max_size=2)))
    header = draw(st.fixed_dictionaries({}, optional={
        "typ": st.sampled_from(["at+jwt", "JWT"]) | JSON, "kid": JSON,
        "jku": st.just("https://evil.example/jwks"), "crit": JSON}))
    return claims, header


def sign(app: Flask, claims: dict[str, Any], header: dict[str, Any]) -> str:
    """A token signed with the app's signing key, with its kid and typ unless the header says
    otherwise. Put together by hand: PyJWT will not write odd claims or header fields. (A header
    naming another algorithm is tests/unit/api's business.)"""
    with app.app_context():
        tokens = services().access_tokens
        key = tokens.keyring.signing_key()
    known = {ISSUER: tokens.issuer, AUDIENCE: tokens.audience}
    claims = {name: known.get(value, value) if isinstance(value, str) else value
              for name, value in claims.items()}
    fields = {"alg": key.alg, "kid": key.kid, "typ": "at+jwt", **header}
    note(f"signed header {fields!r}, claims {claims!r}")
    signing_input = f"{_b64(json.dumps(fields).encode())}.{_b64(json.dumps(claims).encode())}"
    signature = jwt.get_algorithm_by_name(key.alg).sign(signing_input.encode(), key.private)
    return f"{signing_input}.{_b64(signature)}"


def verify_raw(app: Flask, token: str) -> None:
    """AccessTokens.verify promises the claims, or InvalidToken / TokenExpired: nothing else."""
    note(f"AccessTokens.verify({token!r})")
    with app.app_context(), contextlib.suppress(InvalidToken, TokenExpired):
        services().access_tokens.verify(token, datetime.now(UTC))


# Bearer tokens --------------------------------------------------------------------------------

BEARER_OPERATIONS = [("GET", "/api/v2/auth/verify"), ("POST", "/api/v2/auth/logout"),
                     ("DELETE", "/api/v2/auth/providers/github")]


@FUZZ
@given(operation=st.sampled_from(BEARER_OPERATIONS),
       authorization=st.one_of(HEADER_TEXT.map("Bearer {}".format), HEADER_TEXT,
                               jwt_shaped().map("Bearer {}".format)))
def test_any_authorization_header_is_a_401_problem(contract_app: Flask,
                                                   operation: tuple[str, str],
                                                   authorization: str) -> None:
    method, path = operation
    note(f"{method} {path} Authorization: {authorization!r}")
    response = contract_app.test_client().open(path, method=method,
                                               headers={"Authorization": authorization})
    problem = assert_refused(response, {401})
    assert problem["code"] in {"missing_token", "invalid_token"}, problem
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")


@FUZZ
@given(token=st.one_of(ANY_TEXT, jwt_shaped()))
def test_access_token_verification_raises_only_token_errors(contract_app: Flask,
                                                            token: str) -> None:
    verify_raw(contract_app, token)


@FUZZ
@given(forged=claims_and_header())
def test_tokens_signed_with_our_key_and_any_claims_raise_only_token_errors(
        contract_app: Flask, forged: tuple[dict[str, Any], dict[str, Any]]) -> None:
    token = sign(contract_app, *forged)
    verify_raw(contract_app, token)
    # Over HTTP no such token names a live session: a 401, whatever it claims.
    response = contract_app.test_client().get("/api/v2/auth/verify",
                                              headers={"Authorization": f"Bearer {token}"})
    assert_refused(response, {401})


# Refresh tokens, reset tokens, handoff codes --------------------------------------------------

@FUZZ
@given(version=st.sampled_from(["v1", "v2"]), token=ANY_TEXT)
def test_any_refresh_token_is_a_401_or_422_problem(contract_app: Flask, version: str,
                                                   token: str) -> None:
    response = post(contract_app, f"/api/{version}/auth/refresh", {"refresh_token": token})
    assert_refused(response, {401, 422})


@FUZZ
@given(token=ANY_TEXT, new_password=st.one_of(st.just(STRONG_PASSWORD), ANY_TEXT))
def test_any_reset_token_is_a_400_or_422_problem(contract_app: Flask, token: str,
                                                 new_password: str) -> None:
    response = post(contract_app, "/api/v2/auth/reset-password",
                    {"token": token, "new_password": new_password})
    assert_refused(response, {400, 422})


@FUZZ
@given(code=ANY_TEXT, provider=st.one_of(st.sampled_from(["google", "github"]), ANY_TEXT),
       extra=st.fixed_dictionaries({}, optional={
           "code_verifier": ANY_TEXT | st.none(),
           "redirect_uri": st.just(SITE_REDIRECT_URI) | ANY_TEXT | st.none()}))
def test_any_handoff_code_is_a_401_or_422_problem(contract_app: Flask, code: str, provider: str,
                                                  extra: dict[str, Any]) -> None:
    response = post(contract_app, "/api/v2/auth/exchange-code",
                    {"code": code, "provider": provider, **extra})
    assert_refused(response, {401, 422})


# Emails and passwords -------------------------------------------------------------------------

EMAILS = st.one_of(ANY_TEXT, st.emails(), st.emails().map(str.upper))
PASSWORDS = st.one_of(ANY_TEXT, st.just(STRONG_PASSWORD),
                      st.text(min_size=8).map(lambda word: f"{word} {STRONG_PASSWORD}"))


@pytest.fixture(scope="module")
def signed_up() -> set[str]:
    """The passwords (NFKC) of the sign-ups this module made: a login with one may succeed."""
    return set()


@FUZZ
@given(email=EMAILS, password=PASSWORDS, full_name=st.one_of(st.none(), ANY_TEXT))
def test_any_signup_is_a_201_or_a_409_or_422_problem(contract_app: Flask, signed_up: set[str],
                                                     email: str, password: str,
                                                     full_name: str | None) -> None:
    body = {"email": email, "password": password}
    if full_name is not None:
        body["full_name"] = full_name
    response = post(contract_app, "/api/v2/auth/signup", body)
    # The confirmation mail's Message-ID draws on `random` in the outbox's thread: let it finish
    # before Hypothesis draws the next example (it fails a test when something else touches
    # `random` while it draws).
    drained(contract_app.extensions["svc-outbox"])
    assert_refused(response, {201, 409, 422})
    if response.status_code == 201:
        signed_up.add(unicodedata.normalize("NFKC", password))


@FUZZ
@given(version=st.sampled_from(["v1", "v2"]), email=EMAILS, password=PASSWORDS,
       captcha=st.one_of(st.none(), ANY_TEXT))
def test_any_login_is_a_401_or_422_problem(contract_app: Flask, signed_up: set[str],
                                           version: str, email: str, password: str,
                                           captcha: str | None) -> None:
    body = {"email": email, "password": password}
    if version == "v1" and captcha is not None:
        body["captcha_token"] = captcha
    response = post(contract_app, f"/api/{version}/auth/login", body)
    allowed = {401, 422}
    if unicodedata.normalize("NFKC", password) in signed_up:
        allowed.add(200)  # the credentials of a sign-up above
    assert_refused(response, allowed)


# Bodies ---------------------------------------------------------------------------------------

BODIES: dict[str, type[BaseModel]] = {
    "/api/v2/auth/signup": schemas.SignupBody, "/api/v2/auth/login": schemas.LoginBody,
    "/api/v2/auth/refresh": schemas.RefreshBody,
    "/api/v2/auth/exchange-code": schemas.ExchangeCodeBody,
    "/api/v2/auth/forgot-password": schemas.EmailBody,
    "/api/v2/auth/reset-password": schemas.ResetPasswordBody,
    "/api/v2/auth/resend-confirmation": schemas.EmailBody,
    "/api/v1/auth/login": schemas.V1LoginBody, "/api/v1/auth/refresh": schemas.RefreshBody,
}
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "application/merge+json",
                 "text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                 "multipart/form-data; boundary=x", ""]


@pytest.fixture(scope="module")
def limited_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """Rate limits on: their key functions read the body before the view does."""
    app = build_contract_app(tmp_path_factory.mktemp("limited"), RATELIMIT_ENABLED=True)
    yield app
    dispose_app(app)


def is_json(content_type: str) -> bool:
    media = content_type.split(";")[0].strip()
    return media == "application/json" or (media.startswith("application/")
                                           and media.endswith("+json"))


@FUZZ
@given(path=st.sampled_from(sorted(BODIES)), content_type=st.sampled_from(CONTENT_TYPES),
       raw=st.one_of(JSON.map(lambda value: json.dumps(value).encode()), st.binary()),
       limited=st.booleans())
def test_any_body_that_is_not_a_valid_request_is_a_4xx_problem(
        contract_app: Flask, limited_app: Flask, path: str, content_type: str, raw: bytes,
        limited: bool) -> None:
    if is_json(content_type):
        try:
            BODIES[path].model_validate(json.loads(raw))
        except (ValueError, RecursionError, ValidationError):
            pass  # not a valid request: what this property is about
        else:
            assume(False)
    note(f"POST {path} Content-Type: {content_type!r} {raw!r} (rate limits {limited})")
    app = limited_app if limited else contract_app
    response = app.test_client().post(path, data=raw, content_type=content_type or None)
    assert_refused(response, set(range(400, 500)))


# Query strings of the provider sign-in endpoints ----------------------------------------------

@pytest.fixture(scope="module")
def github_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """GitHub enabled, so that the starts read their query (Google stays off: a 404). Its token
    endpoint refuses connections at once: a callback that gets that far fails as the provider's
    error, without a network."""
    app = build_contract_app(tmp_path_factory.mktemp("github"),
                    GITHUB_CLIENT_ID="fuzz-client", GITHUB_CLIENT_SECRET="fuzz-secret",
                    GITHUB_AUTHORIZE_URL="https://github.example/login/oauth/authorize",
                    GITHUB_TOKEN_URL="http://127.0.0.1:9/token",
                    GITHUB_API_URL="http://127.0.0.1:9/", PROVIDER_TIMEOUT=2)
    yield app
    dispose_app(app)


def quoted(value: str) -> str:
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


QUERY_NAMES = st.sampled_from(["redirect_uri", "callback", "state", "code_challenge",
                               "code_challenge_method", "code", "error"]) | st.text(max_size=10)
QUERY_VALUES = st.one_of(ANY_TEXT, st.sampled_from([
    SITE_REDIRECT_URI, SITE_REDIRECT_URI + "/", "symbols", "S256", "plain", "access_denied",
    "A" * 43, "x" * 600, "https://evil.example/auth/callback", "//evil.example"]))
QUERY_STRINGS = st.one_of(
    st.lists(st.tuples(QUERY_NAMES, QUERY_VALUES), max_size=6).map(
        lambda pairs: "&".join(f"{quoted(name)}={quoted(value)}" for name, value in pairs)),
    st.binary().map(lambda raw: raw.decode("latin-1")),
    st.text(),
)


@st.composite
def start_queries(draw: st.DrawFn, target: str, value: str) -> str:
    """A start's own parameters, each well-formed, absent or anything: the way to a 302."""
    def either(good: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(good, good, QUERY_VALUES)

    params = {target: draw(either(st.just(value)))}
    if draw(st.booleans()):
        params["state"] = draw(either(st.text(st.characters(min_codepoint=0x21,
                                                            max_codepoint=0x7E),
                                              min_size=1, max_size=40)))
    if draw(st.booleans()):  # PKCE: the pair, or one of them, each well-formed or not
        pair = {"code_challenge": draw(either(st.from_regex(r"\A[A-Za-z0-9_-]{43}\Z"))),
                "code_challenge_method": draw(either(st.just("S256")))}
        params |= draw(st.sampled_from([pair, pair, dict(list(pair.items())[:1]),
                                        dict(list(pair.items())[1:])]))
    return "&".join(f"{quoted(name)}={quoted(value)}" for name, value in params.items())


# Any one path segment but our own endpoints' names (GET /api/v2/auth/login is that endpoint).
PROVIDERS = st.one_of(
    st.just("github"),
    st.sampled_from(["google", "gitlab", "GitHub"]),
    st.text(st.characters(exclude_characters="/?#%"), min_size=1, max_size=20).filter(
        lambda name: name not in RESERVED))
ACCEPT = st.sampled_from([None, "application/json", "text/html", "*/*", "text/html;q=0.1"])


def get(client: Any, path: str, query: str, accept: str | None) -> TestResponse:
    # The query as a WSGI server hands it over: its bytes, decoded as latin-1.
    raw = query.encode("utf-8", "surrogatepass").decode("latin-1")
    note(f"GET {path}?{raw!r} Accept: {accept!r}")
    return client.get(path, query_string=raw, headers={"Accept": accept} if accept else {})


def assert_browser_refusal(response: TestResponse, allowed: set[int]) -> None:
    """An HTML page for a browser that asked for one, a problem body otherwise, and never a
    redirect with an error."""
    if response.status_code >= 400:
        assert "Location" not in response.headers
        if response.mimetype == "text/html":
            assert response.status_code in allowed, response.status_code
            return
    assert_refused(response, allowed)


@FUZZ
@given(provider=st.just("github") | PROVIDERS, version=st.sampled_from(["v1", "v2"]),
       data=st.data(), accept=ACCEPT)
def test_any_query_on_a_provider_start_is_a_302_400_or_404(github_app: Flask, provider: str,
                                                           version: str, data: st.DataObject,
                                                           accept: str | None) -> None:
    target = ("redirect_uri", SITE_REDIRECT_URI) if version == "v2" else ("callback", "symbols")
    query = data.draw(start_queries(*target) | QUERY_STRINGS, label="query")
    path = (f"/api/v2/auth/{quoted(provider)}" if version == "v2"
            else f"/api/v1/auth/{quoted(provider)}/login")
    response = get(github_app.test_client(), path, query, accept)
    assert_browser_refusal(response, {302, 400, 404})
    if response.status_code == 302:
        assert response.headers["Location"].startswith("https://github.example/login/oauth/")


@FUZZ
@given(provider=PROVIDERS, query=QUERY_STRINGS, accept=ACCEPT, started=st.booleans(),
       extra=st.lists(st.tuples(st.sampled_from(["code", "error", "state"]), QUERY_VALUES),
                      max_size=3))
def test_any_query_on_a_provider_callback_is_a_302_400_or_404(
        github_app: Flask, provider: str, query: str, accept: str | None, started: bool,
        extra: list[tuple[str, str]]) -> None:
    client = github_app.test_client()
    if started:  # a sign-in this browser did start: its state is in the session cookie
        begun = client.get("/api/v2/auth/github",
                           query_string={"redirect_uri": SITE_REDIRECT_URI, "state": "s"})
        assert begun.status_code == 302, begun.get_data(as_text=True)
        state = parse_qs(urlsplit(begun.headers["Location"]).query)["state"][0]
        query = "&".join([f"state={quoted(state)}", query,
                          *(f"{name}={quoted(value)}" for name, value in extra)])
    response = get(client, f"/api/v2/auth/{quoted(provider)}/callback", query, accept)
    assert_browser_refusal(response, {302, 400, 404})
    if response.status_code == 302:  # back to the site, never anywhere else
        assert response.headers["Location"].startswith(SITE_REDIRECT_URI + "?")
