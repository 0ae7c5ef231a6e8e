"""The provider callback trusts nothing but a pending sign-in from this same browser."""

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.sites import SYMBOLS_CALLBACK

pytestmark = pytest.mark.app_settings("oauth")


def start(client, provider="github", **params):
    response = client.get(f"/api/v2/auth/{provider}",
                          query_string={"redirect_uri": SYMBOLS_CALLBACK, **params})
    assert response.status_code == 302
    return parse_qs(urlsplit(response.headers["Location"]).query)["state"][0]


def assert_refused(response):
    assert response.status_code == 400
    assert response.get_json()["code"] == "invalid_state"
    assert "Location" not in response.headers


def test_declining_at_the_provider_returns_to_the_site_with_the_clients_state(client):
    state = start(client, state="client-state-1")
    response = client.get(f"/api/v2/auth/github/callback?state={state}&error=access_denied")
    assert response.status_code == 302
    target = urlsplit(response.headers["Location"])
    assert f"{target.scheme}://{target.netloc}{target.path}" == SYMBOLS_CALLBACK
    assert parse_qs(target.query) == {"error": ["access_denied"], "state": ["client-state-1"]}


def test_other_provider_errors_are_reported_as_provider_error(client):
    state = start(client)
    response = client.get(f"/api/v2/auth/github/callback?state={state}"
                          "&error=server_error&error_description=<script>")
    assert parse_qs(urlsplit(response.headers["Location"]).query) == {"error": ["provider_error"]}


def test_a_missing_state_is_refused(client):
    start(client)
    assert_refused(client.get("/api/v2/auth/github/callback?code=abc"))


def test_an_altered_state_is_refused(client):
    state = start(client)
    assert_refused(client.get(f"/api/v2/auth/github/callback?state={state}x&code=abc"))


def test_a_state_from_another_browser_is_refused(app, client):
    state = start(app.test_client())  # someone else's browser started this sign-in
    assert_refused(client.get(f"/api/v2/auth/github/callback?state={state}&code=abc"))


def test_a_replayed_state_is_refused(client):
    state = start(client)
    first = client.get(f"/api/v2/auth/github/callback?state={state}&error=access_denied")
    assert first.status_code == 302
    assert_refused(client.get(f"/api/v2/auth/github/callback?state={state}&code=abc"))


def test_a_state_for_the_other_provider_is_refused(client):
    state = start(client, provider="github")
    assert_refused(client.get(f"/api/v2/auth/google/callback?state={state}&code=abc"))


def test_an_old_pending_sign_in_expires(client, monkeypatch):
    import time
    state = start(client)
    later = time.time() + 601
    monkeypatch.setattr("app.web.provider_state.time.time", lambda: later)
    assert_refused(client.get(f"/api/v2/auth/github/callback?state={state}&error=access_denied"))


@pytest.mark.parametrize("count", [7])
def test_only_the_newest_pending_sign_ins_are_kept(client, count):
    states = [start(client) for _ in range(count)]
    assert_refused(client.get(f"/api/v2/auth/github/callback?state={states[0]}&error=x"))
    assert client.get(f"/api/v2/auth/github/callback?state={states[-1]}&error=x").status_code == 302


def test_the_state_cookie_is_httponly_and_lax(client):
    client.get(f"/api/v2/auth/github?redirect_uri={SYMBOLS_CALLBACK}")
    cookie = client.get_cookie("svc_session")
    assert cookie is not None and cookie.http_only and cookie.same_site == "Lax"


class TestOverHttps:
    @pytest.fixture
    def settings(self):
        from tests.support.sites import OAUTH_SITES, PROVIDERS
        return {"CLIENT_SITES": OAUTH_SITES, "PUBLIC_URL": "https://auth.example", **PROVIDERS}

    def test_the_cookie_is_host_prefixed_and_secure(self, client):
        response = client.get(f"/api/v2/auth/github?redirect_uri={SYMBOLS_CALLBACK}")
        set_cookie = response.headers["Set-Cookie"]
        assert set_cookie.startswith("__Host-svc_session=")
        assert "Secure" in set_cookie and "HttpOnly" in set_cookie and "Path=/" in set_cookie
        assert "Domain" not in set_cookie
