"""What the provider does not do is refused, not ignored (issue 26, item 4): request objects by
value (`request`) and by reference (a `request_uri` that is no pushed request's), and any
response_mode but query. The error goes back to the client's registered redirect URI with the
state (RFC 6749 §4.1.2.1), or to the person as a page when the client or the URI is not right; a
push gets RFC 6749 JSON. A pushed request's own request_uri keeps working."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from app.oidc import unsupported
from tests.support.oidc import (
    CONFIDENTIAL,
    PUBLIC,
    PUBLIC_URI,
    authorize_query,
    client_post,
    get_code,
    pkce,
    query_of,
)
from tests.support.pages import submit
from tests.unit.oidc.test_endpoints_hostile_input import stored

pytestmark = pytest.mark.app_settings("oidc")

REQUEST_OBJECT = "eyJhbGciOiJub25lIn0.eyJzY29wZSI6Im9wZW5pZCJ9."  # alg none, as JAR allows
REFUSED = {
    "request": ({"request": REQUEST_OBJECT}, "request_not_supported", unsupported.REQUEST_OBJECT),
    "request-uri": ({"request_uri": "https://notes.example/request.jwt"},
                    "request_uri_not_supported", unsupported.REQUEST_OBJECT_URI),
    "form_post": ({"response_mode": "form_post"}, "invalid_request", unsupported.RESPONSE_MODE),
    "fragment": ({"response_mode": "fragment"}, "invalid_request", unsupported.RESPONSE_MODE),
    "query.jwt": ({"response_mode": "query.jwt"}, "invalid_request", unsupported.RESPONSE_MODE),
    "query-then-fragment": ({"response_mode": ["query", "fragment"]}, "invalid_request",
                            unsupported.RESPONSE_MODE),
}


@pytest.mark.parametrize(("extra", "error", "description"), REFUSED.values(), ids=REFUSED.keys())
@pytest.mark.parametrize("signed_in", [False, True], ids=["signed-out", "signed-in"])
def test_it_is_refused_at_the_clients_redirect_uri(app, client, user, extra, error,
                                                  description, signed_in):
    if signed_in:
        submit(client, "/login", {"email": user.email, "password": user.password})
    response = client.get("/oauth2/authorize?" + urlencode(
        authorize_query(verifier=pkce()) | extra, doseq=True))
    assert response.status_code == 302, response.text
    assert response.headers["Location"].startswith(PUBLIC_URI + "?")
    assert query_of(response.headers["Location"]) == {
        "error": error, "error_description": description, "state": "st-1"}
    assert response.headers["Cache-Control"] == "no-store"
    assert stored(app) == (0, 0)


@pytest.mark.parametrize(("extra", "error", "description"), REFUSED.values(), ids=REFUSED.keys())
def test_with_no_redirect_uri_of_the_client_it_is_a_page(client, extra, error, description):
    """An unknown client, another client's URI, or none: nobody is redirected."""
    for query in (authorize_query(client_id="nobody", verifier=pkce()),
                  authorize_query(redirect_uri="https://evil.example/cb", verifier=pkce()),
                  {"client_id": PUBLIC}):
        response = client.get("/oauth2/authorize?" + urlencode(query | extra, doseq=True))
        assert response.status_code == 400 and "Location" not in response.headers
        assert response.mimetype == "text/html"
        assert description.split(":")[0] in response.text.replace("&#39;", "'")


@pytest.mark.parametrize(("extra", "error", "description"),
                         [REFUSED[k] for k in ("request", "form_post", "fragment", "query.jwt")],
                         ids=["request", "form_post", "fragment", "query.jwt"])
def test_a_push_is_refused_in_json(app, client, extra, error, description):
    response = client_post(client, "/oauth2/par", authorize_query(verifier=pkce()) | extra)
    assert response.status_code == 400 and "Location" not in response.headers
    assert response.get_json() == {"error": error, "error_description": description}
    assert stored(app) == (0, 0)


def test_what_is_supported_still_works(client, user):
    """response_mode=query (the default, named), an empty response_mode or request (RFC 6749
    §3.1: as if left out), and a pushed request's request_uri."""
    for extra in ({"response_mode": "query"}, {"response_mode": ""}, {"request": ""},
                  {"request_uri": ""}):
        assert get_code(client, user, authorize_query(verifier=pkce(), **extra))
    pushed = client_post(client, "/oauth2/par", authorize_query(verifier=pkce(),
                                                                response_mode="query"))
    assert pushed.status_code == 201, pushed.text
    answered = client.get("/oauth2/authorize?" + urlencode(
        {"client_id": PUBLIC, "request_uri": pushed.get_json()["request_uri"]}))
    assert "code" in query_of(answered.headers["Location"])


def test_a_confidential_client_is_refused_the_same_way(client):
    query = authorize_query(client_id=CONFIDENTIAL, redirect_uri="https://ledger.example/cb",
                            response_mode="form_post")
    response = client.get("/oauth2/authorize?" + urlencode(query))
    assert response.headers["Location"].startswith("https://ledger.example/cb?")
    assert query_of(response.headers["Location"])["error"] == "invalid_request"
