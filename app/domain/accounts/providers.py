"""Google and GitHub through authlib: the authorization URL, and who the person is afterwards.

Nothing here touches the browser session: the caller keeps the state, PKCE verifier and nonce
bound to the browser (app/web/provider_state.py) and hands them back for the callback.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from authlib.integrations.base_client import OAuthError
from authlib.integrations.flask_client import OAuth
from flask import Flask, current_app
from joserfc.errors import JoseError
from requests import RequestException

from app.domain import addresses, text
from app.domain.accounts.errors import ProviderFailed, ProviderNotEnabled, UnknownProvider
from app.domain.errors import InvalidBody
from app.infra.settings import Settings

PROVIDERS = ("google", "github")
DISPLAY_NAMES = {"google": "Google", "github": "GitHub", "password": "password"}


@dataclass(frozen=True)
class Profile:
    """What a provider tells us about the person, normalised across providers and checked like
    anything a person types (app/domain/text.py): build one with `profile_from`."""

    provider: str
    subject: str
    email: str | None  # canonical (app/domain/addresses.py), or None when unusable
    email_verified: bool
    name: str


MAX_SUBJECT_LENGTH = 255
MAX_NAME_LENGTH = 200


def profile_from(provider: str, untrusted_subject: str, untrusted_email: object,
                 email_verified: bool, untrusted_name: object) -> Profile:
    """A Profile from a provider's answer, which is input like any other.

    The subject must be printable text (ValueError otherwise: the answer is broken). An address
    that is not a valid one, or holds control or bidi characters, is no address: nothing is
    linked or created by it. A display name is cleaned of such characters and shortened.
    """
    if not untrusted_subject or len(untrusted_subject) > MAX_SUBJECT_LENGTH or \
            not text.is_printable(untrusted_subject):
        raise ValueError("the provider's subject is not a usable identifier")
    email = None
    if isinstance(untrusted_email, str):
        try:
            email = addresses.canonical(untrusted_email)
        except InvalidBody:
            email = None
    name = text.cleaned(untrusted_name, MAX_NAME_LENGTH) if isinstance(untrusted_name, str) else ""
    return Profile(provider, untrusted_subject, email, email is not None and email_verified, name)


@dataclass(frozen=True)
class Authorization:
    url: str
    state: str
    code_verifier: str
    nonce: str | None


def register_providers(app: Flask, config: Settings) -> None:
    """One authlib registry per app, holding the providers that have credentials."""
    oauth = OAuth(app)
    timeout = {"default_timeout": config.provider_timeout}
    if config.google_client_id and config.google_client_secret:
        oauth.register(
            "google", client_id=config.google_client_id,
            client_secret=config.google_client_secret,
            server_metadata_url=config.google_metadata_url,
            client_kwargs={"scope": "openid email profile", "code_challenge_method": "S256",
                           **timeout},
        )
    if config.github_client_id and config.github_client_secret:
        oauth.register(
            "github", client_id=config.github_client_id,
            client_secret=config.github_client_secret,
            authorize_url=config.github_authorize_url,
            access_token_url=config.github_token_url,
            api_base_url=config.github_api_url.rstrip("/") + "/",
            client_kwargs={"scope": "read:user user:email", "code_challenge_method": "S256",
                           "token_endpoint_auth_method": "client_secret_post", **timeout},
        )
    app.extensions["svc-oauth"] = oauth


def enabled_providers() -> list[str]:
    oauth: OAuth = current_app.extensions["svc-oauth"]
    return [name for name in PROVIDERS if oauth.create_client(name) is not None]


def _client(untrusted_provider: str) -> Any:
    if untrusted_provider not in PROVIDERS:
        raise UnknownProvider()
    client = current_app.extensions["svc-oauth"].create_client(untrusted_provider)
    if client is None:
        raise ProviderNotEnabled()
    return client


def check_enabled(untrusted_provider: str) -> str:
    """The provider's name, if we know it and it has credentials."""
    _client(untrusted_provider)
    return untrusted_provider


def authorization(provider: str, callback_url: str) -> Authorization:
    try:
        created = _client(provider).create_authorization_url(redirect_uri=callback_url)
    except (OAuthError, RequestException, ValueError) as error:  # discovery failed
        raise ProviderFailed() from error
    return Authorization(created["url"], created["state"], created["code_verifier"],
                         created.get("nonce"))


def profile(provider: str, callback_url: str, code: str, code_verifier: str,
            nonce: str | None) -> Profile:
    """Exchange the provider's code and read the person's identity; ProviderFailed on any
    error, timeout or invalid answer from the provider."""
    client = _client(provider)
    try:
        token = client.fetch_access_token(redirect_uri=callback_url, code=code,
                                          code_verifier=code_verifier)
        if "error" in token:
            raise OAuthError(error=str(token["error"]))
        if provider == "google":
            return _google_profile(client, token, nonce)
        return _github_profile(client, token)
    except (OAuthError, RequestException, JoseError, ValueError, KeyError, TypeError) as error:
        raise ProviderFailed() from error


def _google_profile(client: Any, token: dict[str, Any], nonce: str | None) -> Profile:
    # parse_id_token checks the signature against Google's JWKS, iss, aud, exp, iat, nonce
    # and at_hash.
    claims = client.parse_id_token(token, nonce=nonce, leeway=60)
    if claims is None:
        raise ValueError("no id_token in Google's answer")
    return profile_from("google", str(claims["sub"]), claims.get("email"),
                        claims.get("email_verified") is True, claims.get("name") or "")


def _github_profile(client: Any, token: dict[str, Any]) -> Profile:
    user = client.get("user", token=token)
    user.raise_for_status()
    emails = client.get("user/emails", token=token)
    emails.raise_for_status()
    person = user.json()
    listed = [e for e in emails.json() if isinstance(e, dict) and isinstance(e.get("email"), str)]
    primary = next((e for e in listed if e.get("primary") is True), None)
    return profile_from("github", str(person["id"]),
                        primary["email"] if primary else None,
                        bool(primary and primary.get("verified") is True),
                        person.get("name") or person.get("login") or "")
