"""The stand-ins themselves, driven with plain `requests` as a browser and an RP would."""

from __future__ import annotations

import secrets
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import pytest
import requests

from tests.support import providers as fixtures
from tests.support.encoding import pkce_pair
from tests.support.fake_github import FakeGitHub
from tests.support.providers import OIDC_REDIRECT_URIS, OidcServer, follow_authorization

# The fixtures, under their own names (an import would trip ruff's F811 on every test using one).
oidc_server = fixtures.oidc_server
oidc_server_clean = fixtures.oidc_server_clean
oidc_server_factory = fixtures.oidc_server_factory
github_server = fixtures.github_server
github_server_session = fixtures.github_server_session

TIMEOUT = 10
GITHUB_CALLBACK = "http://127.0.0.1:5000/api/v2/auth/github/callback"


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def get_json(url: str, **kwargs: Any) -> Any:
    with requests.get(url, timeout=TIMEOUT, **kwargs) as response:
        response.raise_for_status()
        return response.json()


def post(url: str, **kwargs: Any) -> requests.Response:
    with requests.post(url, timeout=TIMEOUT, **kwargs) as response:
        response.content  # noqa: B018 - read the body before the connection closes
        return response


# -- OIDC (Google's role) -----------------------------------------------------------------------


class OidcFlow:
    """One authorization request's parameters, and the steps of the code flow."""

    def __init__(self, server: OidcServer, redirect_uri: str | None = None,
                 scope: str = "openid email profile", **extra: str) -> None:
        self.server = server
        self.metadata = get_json(server.metadata_url)
        self.redirect_uri = redirect_uri or server.redirect_uris[0]
        self.verifier, self.challenge = pkce_pair()
        self.state = secrets.token_urlsafe(16)
        self.nonce = secrets.token_urlsafe(16)
        self.params = {
            "response_type": "code", "client_id": server.client_id,
            "redirect_uri": self.redirect_uri, "scope": scope, "state": self.state,
            "nonce": self.nonce, "code_challenge": self.challenge,
            "code_challenge_method": "S256", **extra,
        }

    @property
    def authorize_url(self) -> str:
        return self.metadata["authorization_endpoint"] + "?" + urlencode(self.params)

    def authorize(self, session: requests.Session | None = None) -> dict[str, str]:
        callback = follow_authorization(self.authorize_url, self.redirect_uri, session=session)
        return query_of(callback)

    def token(self, code: str, verifier: str | None = None, basic: bool = False,
              secret: str | None = None) -> requests.Response:
        form = {"grant_type": "authorization_code", "code": code,
                "redirect_uri": self.redirect_uri, "code_verifier": verifier or self.verifier}
        secret = self.server.client_secret if secret is None else secret
        if basic:
            return post(self.metadata["token_endpoint"], data=form,
                        auth=(self.server.client_id, secret))
        form |= {"client_id": self.server.client_id, "client_secret": secret}
        return post(self.metadata["token_endpoint"], data=form)

    def id_token_claims(self, id_token: str) -> dict[str, Any]:
        jwks = jwt.PyJWKClient(self.metadata["jwks_uri"], cache_keys=False, timeout=TIMEOUT)
        key = jwks.get_signing_key_from_jwt(id_token)
        claims: dict[str, Any] = jwt.decode(
            id_token, key.key, algorithms=["RS256"], audience=self.server.client_id,
            issuer=self.server.issuer, options={"require": ["exp", "iat", "sub", "nonce"]})
        return claims


def test_oidc_discovery(oidc_server: OidcServer) -> None:
    metadata = get_json(oidc_server.metadata_url)
    assert oidc_server.issuer.startswith("http://127.0.0.1:")
    assert metadata["issuer"] == oidc_server.issuer
    for endpoint in ("authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint"):
        assert metadata[endpoint].startswith(oidc_server.issuer + "/")
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert {"client_secret_post", "client_secret_basic"} <= set(
        metadata["token_endpoint_auth_methods_supported"])
    assert {"openid", "email", "profile"} <= set(metadata["scopes_supported"])
    assert oidc_server.redirect_uris == OIDC_REDIRECT_URIS


@pytest.mark.parametrize("basic", [False, True], ids=["client_secret_post", "client_secret_basic"])
def test_oidc_code_flow_with_pkce(oidc_server_clean: OidcServer, basic: bool) -> None:
    flow = OidcFlow(oidc_server_clean)
    callback = flow.authorize()
    assert set(callback) == {"code", "state", "iss"}
    assert callback["state"] == flow.state
    assert callback["iss"] == oidc_server_clean.issuer

    last = oidc_server_clean.last_authorize()
    assert last is not None
    assert last["code_challenge"] == flow.challenge
    assert last["code_challenge_method"] == "S256"
    assert last["nonce"] == flow.nonce
    assert last["scope"] == "openid email profile"
    assert last["state"] == flow.state

    response = flow.token(callback["code"], basic=basic)
    assert response.status_code == 200, response.text
    tokens = response.json()
    assert tokens["token_type"].lower() == "bearer"
    claims = flow.id_token_claims(tokens["id_token"])
    assert claims["iss"] == oidc_server_clean.issuer
    assert claims["aud"] == oidc_server_clean.client_id
    assert claims["nonce"] == flow.nonce
    assert claims["sub"] == "google-user-1"
    assert claims["email"] == "ada@example.com"
    assert claims["email_verified"] is True
    assert claims["name"] == "Ada Lovelace"

    userinfo = get_json(flow.metadata["userinfo_endpoint"],
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert userinfo["sub"] == "google-user-1"
    assert userinfo["email"] == "ada@example.com"


def test_oidc_next_login_applies_even_with_a_session_cookie(oidc_server_clean: OidcServer) -> None:
    server = oidc_server_clean
    with requests.Session() as browser:
        first = OidcFlow(server)
        first_claims = first.id_token_claims(
            first.token(first.authorize(browser)["code"]).json()["id_token"])
        assert first_claims["sub"] == "google-user-1"

        server.next_login(sub="google-user-2", email="grace@example.com", email_verified=False,
                          name="Grace Hopper")
        second = OidcFlow(server)
        second_claims = second.id_token_claims(
            second.token(second.authorize(browser)["code"]).json()["id_token"])
    assert second_claims["sub"] == "google-user-2"
    assert second_claims["email"] == "grace@example.com"
    assert second_claims["email_verified"] is False
    assert second_claims["name"] == "Grace Hopper"


def test_oidc_scope_limits_the_claims(oidc_server_clean: OidcServer) -> None:
    flow = OidcFlow(oidc_server_clean, scope="openid email")
    claims = flow.id_token_claims(flow.token(flow.authorize()["code"]).json()["id_token"])
    assert claims["email"] == "ada@example.com"
    assert "name" not in claims


def test_oidc_select_account_prompt_is_accepted(oidc_server_clean: OidcServer) -> None:
    flow = OidcFlow(oidc_server_clean, prompt="select_account")
    callback = flow.authorize()
    assert "code" in callback, callback
    assert flow.token(callback["code"]).status_code == 200


def test_oidc_denied(oidc_server_clean: OidcServer) -> None:
    oidc_server_clean.deny_next()
    flow = OidcFlow(oidc_server_clean)
    callback = flow.authorize()
    assert callback["error"] == "access_denied"
    assert callback["state"] == flow.state
    assert "code" not in callback
    # Only the next one: the one after it goes through.
    assert "code" in OidcFlow(oidc_server_clean).authorize()


def test_oidc_wrong_verifier_refused(oidc_server_clean: OidcServer) -> None:
    flow = OidcFlow(oidc_server_clean)
    code = flow.authorize()["code"]
    wrong, _ = pkce_pair()
    response = flow.token(code, verifier=wrong)
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_grant"


def test_oidc_code_is_single_use(oidc_server_clean: OidcServer) -> None:
    flow = OidcFlow(oidc_server_clean)
    code = flow.authorize()["code"]
    assert flow.token(code).status_code == 200
    again = flow.token(code)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"


def test_oidc_wrong_client_secret_refused(oidc_server_clean: OidcServer) -> None:
    flow = OidcFlow(oidc_server_clean)
    code = flow.authorize()["code"]
    for basic in (False, True):
        response = flow.token(code, secret="not-the-secret", basic=basic)
        assert response.status_code == 401
        assert response.json()["error"] == "invalid_client"


def test_oidc_pkce_is_required(oidc_server_clean: OidcServer) -> None:
    flow = OidcFlow(oidc_server_clean)
    del flow.params["code_challenge"], flow.params["code_challenge_method"]
    callback = flow.authorize()
    assert callback["error"] == "invalid_request"
    assert "code" not in callback


def test_oidc_unregistered_redirect_uri_refused_until_added(oidc_server_clean: OidcServer) -> None:
    other = "http://127.0.0.1:5999/api/v2/auth/google/callback"
    flow = OidcFlow(oidc_server_clean, redirect_uri=other)
    with requests.get(flow.authorize_url, allow_redirects=False, timeout=TIMEOUT) as response:
        assert response.status_code == 400
        assert "Location" not in response.headers
        assert response.json()["error"] == "invalid_redirect_uri"

    oidc_server_clean.add_redirect_uris(other)
    callback = flow.authorize()
    assert flow.token(callback["code"]).status_code == 200


def test_oidc_factory_with_other_redirect_uris(oidc_server_factory: Any) -> None:
    uri = "http://127.0.0.1:6123/api/v2/auth/google/callback"
    started = time.monotonic()
    server = oidc_server_factory([uri], client_id="other-client", client_secret="other-secret")
    assert time.monotonic() - started < 30
    flow = OidcFlow(server)
    assert flow.redirect_uri == uri
    code = flow.authorize()["code"]
    claims = flow.id_token_claims(flow.token(code, basic=True).json()["id_token"])
    assert claims["aud"] == "other-client"
    server.stop()
    assert server.process.poll() is not None


# -- GitHub -------------------------------------------------------------------------------------


class GitHubFlow:
    def __init__(self, github: FakeGitHub, scope: str = "read:user user:email",
                 redirect_uri: str = GITHUB_CALLBACK) -> None:
        self.github = github
        self.redirect_uri = redirect_uri
        self.verifier, self.challenge = pkce_pair()
        self.state = secrets.token_urlsafe(16)
        self.params = {
            "client_id": github.client_id, "redirect_uri": redirect_uri, "scope": scope,
            "state": self.state, "code_challenge": self.challenge,
            "code_challenge_method": "S256",
        }

    def authorize(self) -> dict[str, str]:
        url = self.github.authorize_url + "?" + urlencode(self.params)
        return query_of(follow_authorization(url, self.redirect_uri))

    def token(self, code: str, *, verifier: str | None = None, json: bool = True,
              basic: bool = False, secret: str | None = None) -> requests.Response:
        secret = self.github.client_secret if secret is None else secret
        form = {"code": code, "redirect_uri": self.redirect_uri,
                "code_verifier": verifier or self.verifier}
        auth = None
        if basic:
            auth = (self.github.client_id, secret)
        else:
            form |= {"client_id": self.github.client_id, "client_secret": secret}
        headers = {"Accept": "application/json"} if json else {}
        return post(self.github.token_url, data=form, headers=headers, auth=auth)

    def access_token(self) -> str:
        response = self.token(self.authorize()["code"])
        token: str = response.json()["access_token"]
        return token


def api(github: FakeGitHub, path: str, token: str, scheme: str = "Bearer") -> requests.Response:
    with requests.get(github.api_url + path, timeout=TIMEOUT,
                      headers={"Authorization": f"{scheme} {token}",
                               "Accept": "application/vnd.github+json"}) as response:
        response.content  # noqa: B018
        return response


def test_github_urls(github_server: FakeGitHub) -> None:
    assert github_server.authorize_url.endswith("/login/oauth/authorize")
    assert github_server.token_url.endswith("/login/oauth/access_token")
    assert urlsplit(github_server.api_url).path == ""
    # Two hosts, as github.com and api.github.com.
    assert urlsplit(github_server.api_url).netloc != urlsplit(github_server.token_url).netloc


@pytest.mark.parametrize("basic", [False, True], ids=["client_secret_post", "client_secret_basic"])
def test_github_flow(github_server: FakeGitHub, basic: bool) -> None:
    flow = GitHubFlow(github_server)
    callback = flow.authorize()
    assert set(callback) == {"code", "state"}
    assert callback["state"] == flow.state
    assert github_server.last_authorize == flow.params

    response = flow.token(callback["code"], basic=basic)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"access_token", "token_type", "scope"}
    assert body["token_type"] == "bearer"
    assert body["scope"] == "read:user,user:email"
    received = github_server.token_requests
    assert len(received) == 1
    assert received[0]["code_verifier"] == flow.verifier
    assert ("client_secret" in received[0]) is not basic

    token = body["access_token"]
    for scheme in ("Bearer", "token"):
        user = api(github_server, "/user", token, scheme)
        assert user.status_code == 200
        assert user.json() == {"id": 4242, "login": "octo", "name": "Octo Cat", "email": None}
    emails = api(github_server, "/user/emails", token)
    assert emails.status_code == 200
    assert emails.json() == [{"email": "octo@example.com", "primary": True, "verified": True,
                              "visibility": "public"}]


def test_github_form_encoded_token_response(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    response = flow.token(flow.authorize()["code"], json=False)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    body = parse_qs(response.text)
    assert body["token_type"] == ["bearer"]
    assert body["scope"] == ["read:user,user:email"]
    assert api(github_server, "/user", body["access_token"][0]).status_code == 200


def test_github_next_login(github_server: FakeGitHub) -> None:
    emails = [
        {"email": "hidden@example.com", "primary": True, "verified": False, "visibility": None},
        {"email": "mona@example.com", "primary": False, "verified": True, "visibility": "public"},
    ]
    github_server.next_login(id=7, login="mona", name="Mona Lisa", emails=emails)
    token = GitHubFlow(github_server).access_token()
    assert api(github_server, "/user", token).json() == {
        "id": 7, "login": "mona", "name": "Mona Lisa", "email": None}
    assert api(github_server, "/user/emails", token).json() == emails


def test_github_wrong_verifier_refused_and_code_spent(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    wrong, _ = pkce_pair()
    response = flow.token(code, verifier=wrong)
    assert response.status_code == 200  # GitHub reports token errors with a 200
    assert response.json()["error"] == "bad_verification_code"
    assert "access_token" not in response.json()
    assert flow.token(code).json()["error"] == "bad_verification_code"


def test_github_code_is_single_use(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    assert "access_token" in flow.token(code).json()
    again = flow.token(code, json=False)
    assert again.status_code == 200
    assert parse_qs(again.text)["error"] == ["bad_verification_code"]


def test_github_wrong_client_secret_refused(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    for basic in (False, True):
        body = flow.token(code, secret="nope", basic=basic).json()
        assert body["error"] == "incorrect_client_credentials"
    # A refused client does not spend the code.
    assert "access_token" in flow.token(code).json()


def test_github_redirect_uri_must_match_at_token(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    flow.redirect_uri = "http://127.0.0.1:5000/elsewhere"
    assert flow.token(code).json()["error"] == "redirect_uri_mismatch"


def test_github_denied(github_server: FakeGitHub) -> None:
    github_server.deny_next()
    flow = GitHubFlow(github_server)
    callback = flow.authorize()
    assert callback["error"] == "access_denied"
    assert callback["state"] == flow.state
    assert "code" not in callback
    assert "code" in GitHubFlow(github_server).authorize()


def test_github_pkce_required(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    del flow.params["code_challenge"], flow.params["code_challenge_method"]
    assert flow.authorize()["error"] == "invalid_request"
    flow.params |= {"code_challenge": flow.challenge, "code_challenge_method": "plain"}
    assert flow.authorize()["error"] == "invalid_request"


def test_github_fail_and_delay_token_next(github_server: FakeGitHub) -> None:
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    github_server.fail_token_next(status=502)
    assert flow.token(code).status_code == 502
    assert flow.token(code).status_code == 200  # once only, and the code was not spent

    github_server.delay_token_next(0.5)
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    started = time.monotonic()
    assert "access_token" in flow.token(code).json()
    assert time.monotonic() - started >= 0.5


def test_github_delay_makes_a_client_time_out(github_server: FakeGitHub) -> None:
    github_server.delay_token_next(1.0)
    flow = GitHubFlow(github_server)
    code = flow.authorize()["code"]
    with pytest.raises(requests.Timeout):
        requests.post(github_server.token_url, data={"code": code}, timeout=0.2)


def test_github_api_auth(github_server: FakeGitHub) -> None:
    assert api(github_server, "/user", "gho_unknown").status_code == 401
    assert api(github_server, "/user", "gho_unknown").json()["message"] == "Bad credentials"
    token = GitHubFlow(github_server, scope="read:user").access_token()
    assert api(github_server, "/user", token).status_code == 200
    assert api(github_server, "/user/emails", token).status_code == 404  # needs user:email


def test_github_reset_between_tests(github_server_session: FakeGitHub) -> None:
    github_server_session.next_login(login="someone")
    github_server_session.deny_next()
    github_server_session.reset()
    assert github_server_session.last_authorize is None
    assert github_server_session.token_requests == []
    assert "code" in GitHubFlow(github_server_session).authorize()
