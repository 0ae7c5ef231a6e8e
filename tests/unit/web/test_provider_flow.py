"""Whole sign-ins through real stand-ins: Google is oidc-provider (Node) on 127.0.0.1, GitHub a
local server speaking its authorize, token, /user and /user/emails endpoints."""


import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import User
from tests.support import providers as fixtures
from tests.support.accounts import OWNED
from tests.support.http import bearer
from tests.support.oauth import (
    exchange,
    landing,
    provider_settings,
    sign_in,
)
from tests.support.sites import SYMBOLS_CALLBACK

pytestmark = pytest.mark.app_settings("oauth")

oidc_server = fixtures.oidc_server
oidc_server_clean = fixtures.oidc_server_clean
github_server_session = fixtures.github_server_session
github_server = fixtures.github_server

@pytest.fixture
def settings(oidc_server_clean, github_server):
    return provider_settings(oidc_server_clean, github_server)


@pytest.mark.parametrize("provider", ["google", "github"])
def test_a_new_person_signs_in_and_the_site_gets_tokens(client, provider):
    target, params = landing(sign_in(client, provider))
    assert target == SYMBOLS_CALLBACK
    assert params.keys() == {"code", "provider", "state"}
    assert params["provider"] == provider and params["state"] == "site-state"
    response = exchange(client, params["code"], provider)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    verify = client.get("/api/v2/auth/verify", headers=bearer(body["access_token"])).get_json()
    assert verify["user"]["providers"] == [provider]
    expected = {"google": ("ada@example.com", "Ada Lovelace"),
                "github": ("octo@example.com", "Octo Cat")}[provider]
    assert (body["user"]["email"], body["user"]["full_name"]) == expected


def test_google_gets_pkce_a_nonce_and_narrow_scopes(client, oidc_server_clean):
    sign_in(client, "google")
    request = oidc_server_clean.last_authorize()
    assert request["code_challenge_method"] == "S256" and len(request["code_challenge"]) == 43
    assert len(request["nonce"]) >= 20 and len(request["state"]) >= 22
    assert request["scope"] == "openid email profile"


def test_github_gets_pkce_and_its_verifier(client, github_server):
    sign_in(client, "github")
    assert github_server.last_authorize["code_challenge_method"] == "S256"
    assert github_server.token_requests[-1]["code_verifier"]


def test_the_v1_start_returns_to_the_sites_callback(client):
    location = sign_in(client, "github", start_path="/api/v1/auth/github/login",
                       callback="symbols")
    target, params = landing(location)
    assert target == SYMBOLS_CALLBACK and params["provider"] == "github"


def test_signing_in_again_finds_the_same_account(client):
    first = exchange(client, landing(sign_in(client, "google"))[1]["code"], "google").get_json()
    second = exchange(client, landing(sign_in(client, "google"))[1]["code"], "google").get_json()
    assert first["user"]["id"] == second["user"]["id"]


def test_the_code_is_bound_to_the_provider_and_the_verifier(client):
    code = landing(sign_in(client, "google"))[1]["code"]
    assert exchange(client, code, "github").status_code == 401
    code = landing(sign_in(client, "google"))[1]["code"]
    assert exchange(client, code, "google", verifier="y" * 43).status_code == 401


def test_declining_returns_access_denied_to_the_site(client, oidc_server_clean, github_server):
    oidc_server_clean.deny_next()
    github_server.deny_next()
    for provider in ("google", "github"):
        target, params = landing(sign_in(client, provider))
        assert target == SYMBOLS_CALLBACK
        assert params == {"error": "access_denied", "state": "site-state"}


def test_a_provider_failure_returns_provider_error(client, github_server):
    github_server.fail_token_next(status=500)
    assert landing(sign_in(client, "github"))[1] == {"error": "provider_error",
                                                      "state": "site-state"}


def test_a_provider_timeout_returns_provider_error(client, github_server):
    github_server.delay_token_next(3)  # beyond PROVIDER_TIMEOUT
    assert landing(sign_in(client, "github"))[1]["error"] == "provider_error"


def test_a_github_account_without_a_verified_email_gets_no_account(client, github_server):
    github_server.next_login(id=777, emails=[
        {"email": "x@example.com", "primary": True, "verified": False, "visibility": None}])
    assert landing(sign_in(client, "github"))[1]["error"] == "email_not_verified"


def test_an_unverified_google_email_matching_an_account_gets_no_access(
        client, make_user, oidc_server_clean):
    victim = make_user("victim@example.com", email_verified=True)
    oidc_server_clean.next_login(sub="attacker", email=victim.email, email_verified=False,
                                 name="Mallory")
    params = landing(sign_in(client, "google"))[1]
    assert "code" not in params and params["error"] == "email_not_verified"


def test_a_verified_email_of_an_unconfirmed_account_is_not_linked_unasked(
        client, make_user, oidc_server_clean):
    """The password may be a stranger's: the person is asked to prove it (issue 12, item 1)."""
    make_user("ada@example.com", email_verified=False)
    assert sign_in(client, "google") == "/login/link"


def test_a_verified_email_of_a_confirmed_account_links_it(client, make_user):
    local = make_user("ada@example.com", **OWNED)
    body = exchange(client, landing(sign_in(client, "google"))[1]["code"], "google").get_json()
    assert body["user"]["id"] == local.id


def test_an_id_token_for_another_audience_is_refused(app, client, monkeypatch):
    """After a genuine token exchange, we pretend our client id is another: the ID token's
    aud no longer names us, and the sign-in must fail."""
    google = app.extensions["svc-oauth"].create_client("google")
    genuine_fetch = google.fetch_access_token

    def fetch_then_change_client_id(**kwargs):
        token = genuine_fetch(**kwargs)
        monkeypatch.setattr(google, "client_id", "someone-else")
        return token

    monkeypatch.setattr(google, "fetch_access_token", fetch_then_change_client_id)
    assert landing(sign_in(client, "google"))[1]["error"] == "provider_error"


def test_an_id_token_with_another_nonce_is_refused(client, monkeypatch):
    from app.domain.accounts import providers

    genuine = providers._google_profile
    monkeypatch.setattr(providers, "_google_profile",
                        lambda google, token, nonce: genuine(google, token, "another-nonce"))
    assert landing(sign_in(client, "google"))[1]["error"] == "provider_error"


def test_a_wrong_issuer_in_the_id_token_is_refused(app, client, monkeypatch):
    google = app.extensions["svc-oauth"].create_client("google")
    google.load_server_metadata()
    monkeypatch.setitem(google.server_metadata, "issuer", "https://accounts.google.com")
    assert landing(sign_in(client, "google"))[1]["error"] == "provider_error"


def test_a_provider_sign_up_keeps_the_browsers_language(app, client):
    # As a hosted sign-up keeps its page's (tests/unit/pages/test_auth.py): its mails use it.
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "fr-BE, en;q=0.3"
    sign_in(client, "github")
    with app.app_context():
        assert db.session.scalar(
            select(User.language).where(User.email == "octo@example.com")) == "fr"
