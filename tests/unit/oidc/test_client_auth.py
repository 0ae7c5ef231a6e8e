"""invalid_client says how the client is registered to authenticate (issue 26, item 4): each
registered method against each other way of sending credentials, at every endpoint that
authenticates clients, and the same words whether the secret sent was right, near or wrong."""

from __future__ import annotations

import base64

import pytest
from authlib.oauth2.base import invalid_error_characters

from app.domain.tokens import tokens
from app.oidc import client_auth
from tests.support.admin import register
from tests.support.oidc import (
    CONFIDENTIAL,
    CONFIDENTIAL_URI,
    PUBLIC,
    PUBLIC_URI,
    SECRET,
    SITES,
    authorize_query,
    pkce,
)

pytestmark = pytest.mark.app_settings("oidc")

POSTING = "journal"  # registered for client_secret_post
POSTING_URI = "https://journal.example/cb"
POSTING_SECRET = "journal-secret-" + "y" * 40
SECRETS = {CONFIDENTIAL: SECRET, POSTING: POSTING_SECRET, PUBLIC: "a-guess-" + "z" * 40}
REGISTERED = {CONFIDENTIAL: "client_secret_basic", POSTING: "client_secret_post",
              PUBLIC: "none"}
URIS = {CONFIDENTIAL: CONFIDENTIAL_URI, POSTING: POSTING_URI, PUBLIC: PUBLIC_URI}
# How a request may send credentials, and which secret: the client's, one a character off, or
# another altogether.
TRIES = [("client_secret_basic", "right"), ("client_secret_basic", "near"),
         ("client_secret_basic", "wrong"), ("client_secret_post", "right"),
         ("client_secret_post", "near"), ("client_secret_post", "wrong"), ("none", None)]


@pytest.fixture
def settings():
    return {"CLIENT_SITES": SITES | {POSTING: {
        "redirect_uris": [POSTING_URI], "origins": [],
        "client_secret_sha256": tokens.hash_secret(POSTING_SECRET),
        "token_endpoint_auth_method": "client_secret_post"}}}


def _secret(client_id: str, which: str | None) -> str:
    right = SECRETS[client_id]
    return {"right": right, "near": right[:-1] + "q", "wrong": "not-" + right}[which or "wrong"]


def _send(client, path: str, body: dict[str, str], client_id: str, method: str,
          which: str | None):
    headers = {}
    form = {name: value for name, value in body.items() if name != "client_id"}
    if method == "client_secret_basic":
        raw = f"{client_id}:{_secret(client_id, which)}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(raw).decode()
    else:
        form["client_id"] = client_id
        if method == "client_secret_post":
            form["client_secret"] = _secret(client_id, which)
    return client.post(path, data=form, headers=headers)


def _bodies(client_id: str) -> dict[str, tuple[dict[str, str], int]]:
    """Each endpoint's request, and what it answers once the client is authenticated."""
    return {
        "/oauth2/token": ({"grant_type": "refresh_token", "refresh_token": "unknown"}, 400),
        "/oauth2/revoke": ({"token": "unknown"}, 200),
        "/oauth2/introspect": ({"token": "unknown"}, 200),
        "/oauth2/par": (authorize_query(client_id=client_id, redirect_uri=URIS[client_id],
                                        verifier=pkce()), 201),
    }


def _expected(client_id: str, path: str, method: str, which: str | None) -> str | None:
    """The description of the refusal, or None where the client authenticates."""
    registered = REGISTERED[client_id]
    if path == "/oauth2/introspect" and registered == "none":
        return client_auth.CONFIDENTIAL_ONLY
    if method == registered:
        if which in ("right", None):
            return None
        return client_auth.NOT_THE_CLIENTS.format(method=registered)
    return client_auth.SEND[registered]


@pytest.mark.parametrize("path", ["/oauth2/token", "/oauth2/revoke", "/oauth2/introspect",
                                  "/oauth2/par"])
@pytest.mark.parametrize("client_id", [CONFIDENTIAL, POSTING, PUBLIC])
def test_each_registered_method_against_each_way_of_sending(client, path, client_id):
    body, authenticated = _bodies(client_id)[path]
    for method, which in TRIES:
        response = _send(client, path, body, client_id, method, which)
        expected = _expected(client_id, path, method, which)
        if expected is None:
            assert response.status_code == authenticated, (method, which, response.text)
            continue
        assert response.status_code in (400, 401), (method, which, response.text)
        answer = response.get_json()
        assert answer == {"error": "invalid_client", "error_description": expected}, \
            (method, which)
        assert response.headers["Cache-Control"] == "no-store"
        if response.status_code == 401:  # RFC 6749 §5.2
            assert response.headers["WWW-Authenticate"].startswith('Basic error="invalid_client"')


def test_the_words_are_the_same_whatever_the_secret(client):
    """A right secret sent the wrong way, a near one and another: one description each way."""
    for method in ("client_secret_basic", "client_secret_post"):
        said = {which: _send(client, "/oauth2/token", {"grant_type": "refresh_token",
                                                       "refresh_token": "x"},
                             POSTING if method == "client_secret_basic" else CONFIDENTIAL,
                             method, which).get_json()["error_description"]
                for which in ("right", "near", "wrong")}
        assert len(set(said.values())) == 1, said
    near = {which: _send(client, "/oauth2/token", {"grant_type": "refresh_token",
                                                   "refresh_token": "x"},
                         CONFIDENTIAL, "client_secret_basic", which).get_json()
            for which in ("near", "wrong")}
    assert near["near"] == near["wrong"]


def test_no_client_or_an_unknown_one(client):
    nobody = client.post("/oauth2/token", data={"grant_type": "refresh_token",
                                                "refresh_token": "x"})
    assert nobody.get_json() == {"error": "invalid_client",
                                 "error_description": client_auth.NO_CLIENT}
    for form in ({"client_id": "nobody"}, {"client_id": "nobody", "client_secret": "s"}):
        unknown = client.post("/oauth2/token", data={"grant_type": "refresh_token",
                                                     "refresh_token": "x", **form})
        assert unknown.get_json() == {"error": "invalid_client",
                                      "error_description": client_auth.UNKNOWN}


def test_a_public_client_asking_for_its_own_token_is_told_it_is_public(client):
    response = client.post("/oauth2/token", data={"grant_type": "client_credentials",
                                                  "client_id": PUBLIC})
    assert response.get_json() == {"error": "invalid_client",
                                   "error_description": client_auth.CONFIDENTIAL_ONLY}


def test_a_service_client_is_told_its_method_and_its_one_endpoint(app, client):
    service = register(app, "billing", "users:read")
    right = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                        auth=service)
    assert right.status_code == 200, right.text
    posted = client.post("/oauth2/token", data={
        "grant_type": "client_credentials", "client_id": service[0], "client_secret": service[1]})
    assert posted.get_json()["error_description"] == client_auth.SEND["client_secret_basic"]
    for path in ("/oauth2/revoke", "/oauth2/introspect", "/oauth2/par"):
        elsewhere = client.post(path, data={"token": "x"}, auth=service)
        assert elsewhere.status_code == 401
        assert elsewhere.get_json()["error_description"] == client_auth.SERVICE_CLIENT, path


def test_every_description_is_one_rfc_6749_allows():
    """%x20-21 / %x23-5B / %x5D-7E only: authlib refuses any other character (a 500)."""
    said = [client_auth.NO_CLIENT, client_auth.UNKNOWN, client_auth.CONFIDENTIAL_ONLY,
            client_auth.SERVICE_CLIENT, *client_auth.SEND.values(),
            *(client_auth.NOT_THE_CLIENTS.format(method=m) for m in REGISTERED.values())]
    assert all(not invalid_error_characters(text) for text in said)
