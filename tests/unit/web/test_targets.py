"""Redirect targets: exact matches of registered URIs and site names, or 400 with no Location."""

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.sites import SYMBOLS_CALLBACK

pytestmark = pytest.mark.app_settings("oauth")

NEAR_MISSES = [
    "https://evil.example/auth/callback",               # host
    "https://symbols.example.evil.example/auth/callback",  # suffix host
    "https://symbols.example:444/auth/callback",        # port
    "https://symbols.example/auth/callback/",           # trailing slash
    "https://symbols.example/auth/callback/../x",       # dot segments
    "https://symbols.example/auth/Callback",            # case in the path
    "https://SYMBOLS.example/auth/callback",             # case in the host
    "http://symbols.example/auth/callback",             # scheme
    "https://symbols.example@evil.example/auth/callback",  # userinfo
    "https://evil.example@symbols.example/auth/callback",  # userinfo on the right host
    "//symbols.example/auth/callback",                  # scheme-relative
    "//evil.example",
    "https:\\\\evil.example\\auth\\callback",           # backslashes
    "https://symbols.example\\@evil.example/auth/callback",
    "https://symbols.example/auth/callback%2F..%2F",    # encoding
    "https://symbols.example/auth/%63allback",
    "https://symbols.example/auth/callback?next=x",     # extra query
    "https://symbols.example/auth/callback#frag",
    "https://symbols.example/auth/callback\t",
    "/auth/callback",
    "javascript:alert(1)",
    "",
]


@pytest.mark.parametrize("uri", NEAR_MISSES)
def test_a_near_miss_redirect_uri_is_400_with_no_location(client, uri):
    response = client.get("/api/v2/auth/google", query_string={"redirect_uri": uri})
    assert response.status_code == 400
    assert response.get_json()["code"] == "invalid_redirect_uri"
    assert "Location" not in response.headers


def test_a_missing_redirect_uri_is_400(client):
    response = client.get("/api/v2/auth/google")
    assert response.status_code == 400 and "Location" not in response.headers


def test_a_browser_gets_an_html_page_not_json(client):
    response = client.get("/api/v2/auth/google?redirect_uri=https://evil.example",
                          headers={"Accept": "text/html,application/xhtml+xml"})
    assert response.status_code == 400
    assert response.mimetype == "text/html"
    assert b"We could not sign you in" in response.data
    assert "Location" not in response.headers


def test_the_registered_uri_starts_the_sign_in(client):
    response = client.get("/api/v2/auth/github", query_string={"redirect_uri": SYMBOLS_CALLBACK})
    assert response.status_code == 302
    assert response.headers["Location"].startswith("https://github.com/login/oauth/authorize?")


@pytest.mark.parametrize("callback", ["footprints", "SYMBOLS", "symbols.evil", "https://evil",
                                      " symbols", "symbols ", "", "symbols%00"])
def test_v1_callback_must_name_a_registered_site(client, callback):
    response = client.get("/api/v1/auth/github/login", query_string={"callback": callback})
    assert response.status_code == 400
    assert response.get_json()["code"] == "unknown_callback"
    assert "Location" not in response.headers


def test_a_repeated_callback_uses_the_first_value_only_if_it_is_registered(client):
    response = client.get("/api/v1/auth/github/login?callback=evil&callback=symbols")
    assert response.status_code == 400


def test_v1_callback_maps_to_the_sites_first_redirect_uri(client, app):
    with client:
        response = client.get("/api/v1/auth/github/login?callback=symbols&state=abc")
        assert response.status_code == 302
        from flask import session
        pending = next(iter(session["svc_oauth"].values()))
    assert pending["redirect_uri"] == SYMBOLS_CALLBACK
    assert pending["client_state"] == "abc"


def test_footprints_works_once_registered_with_the_cli(app, client):
    assert client.get("/api/v1/auth/github/login?callback=footprints").status_code == 400
    result = app.test_cli_runner().invoke(args=[
        "sites", "add", "footprints", "--redirect-uri", "https://footprints.example/auth/callback",
        "--origin", "https://footprints.example"])
    assert result.exit_code == 0, result.output
    assert client.get("/api/v1/auth/github/login?callback=footprints").status_code == 302
    assert app.test_cli_runner().invoke(args=["sites", "remove", "footprints"]).exit_code == 0
    assert client.get("/api/v1/auth/github/login?callback=footprints").status_code == 400


def test_the_provider_request_carries_pkce_s256_state_and_narrow_scopes(client):
    location = client.get("/api/v2/auth/github", query_string={
        "redirect_uri": SYMBOLS_CALLBACK}).headers["Location"]
    query = parse_qs(urlsplit(location).query)
    assert query["code_challenge_method"] == ["S256"]
    assert len(query["code_challenge"][0]) == 43
    assert len(query["state"][0]) >= 22  # >= 128 bits
    assert query["scope"] == ["read:user user:email"]
    assert query["redirect_uri"] == ["http://127.0.0.1:5000/api/v2/auth/github/callback"]


@pytest.mark.parametrize(("provider", "status", "code"), [
    ("facebook", 404, "unknown_provider"), ("GOOGLE", 404, "unknown_provider")])
def test_unknown_providers_are_404(client, provider, status, code):
    response = client.get(f"/api/v2/auth/{provider}?redirect_uri={SYMBOLS_CALLBACK}")
    assert response.status_code == status and response.get_json()["code"] == code


class TestWithoutCredentials:
    @pytest.fixture
    def settings(self):
        from tests.support.sites import OAUTH_SITES
        return {"CLIENT_SITES": OAUTH_SITES}

    def test_a_provider_without_credentials_is_404_provider_not_enabled(self, client):
        for path in ("/api/v2/auth/google?redirect_uri=" + SYMBOLS_CALLBACK,
                     "/api/v1/auth/github/login?callback=symbols"):
            response = client.get(path)
            assert response.status_code == 404
            assert response.get_json()["code"] == "provider_not_enabled"


@pytest.mark.parametrize(("params", "detail"), [
    ({"code_challenge": "a" * 43, "code_challenge_method": "plain"}, "S256"),
    ({"code_challenge": "a" * 43}, "S256"),
    ({"code_challenge": "short", "code_challenge_method": "S256"}, "43"),
    ({"code_challenge_method": "S256"}, "without"),
    ({"state": "has spaces in it"}, "state"),
    ({"state": "x" * 513}, "state"),
])
def test_bad_client_parameters_are_400(client, params, detail):
    response = client.get("/api/v2/auth/google",
                          query_string={"redirect_uri": SYMBOLS_CALLBACK, **params})
    assert response.status_code == 400
    assert response.get_json()["code"] == "invalid_request"
    assert detail in response.get_json()["detail"]
    assert "Location" not in response.headers
