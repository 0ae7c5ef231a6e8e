"""Registering sites (the CLI) and checking SVC_CLIENT_SITES: exact URIs, names that are no
audience of ours and no service client's, the OAuth client's method and scopes, and how the site
shows on our pages. `sites add` refuses a name that exists; `sites update` changes only what it
is given, so nothing is dropped by accident."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from app.db.transactions import writes
from app.domain import text
from app.domain.clients import branding
from app.domain.clients.endpoints import check_endpoint
from app.domain.clients.origins import note_sites_changed
from app.domain.clients.sites import (
    PUBLIC,
    SECRET_METHODS,
    SITE_NAME,
    SUPPORTED_SCOPES,
    Site,
    _from_row,
    _from_settings,
    all_sites,
)
from app.domain.clock import now
from app.domain.errors import InvalidBody
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import ClientSite, ServiceClient


def _check_uri(uri: str, *, origin: bool) -> str:
    parts = urlsplit(uri)
    local = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and local):
        raise InvalidBody(f"{uri!r} must be https (http only for localhost).")
    if not parts.hostname or parts.username or parts.password or parts.fragment:
        raise InvalidBody(f"{uri!r} needs a host, and no user, password or fragment.")
    if origin and (parts.path or parts.query):
        raise InvalidBody(f"{uri!r} is not an origin: scheme://host[:port] only.")
    return uri


@dataclass(frozen=True)
class Registration:
    """What `sites add` registers beyond redirect URIs and origins (the defaults: a first-party
    public client allowed `openid email profile`)."""

    post_logout_redirect_uris: list[str] | None = None
    auth_method: str = PUBLIC
    scopes: list[str] | None = None
    first_party: bool = True
    looks: Looks | None = None
    backchannel_logout_uri: str | None = None
    email_code_sign_in: bool = True  # whether its sign-ins may use a mailed code


@dataclass(frozen=True)
class Looks:
    """How the site shows on our pages; None leaves a value as it is (`sites update`)."""

    display_name: str | None = None
    accent_color: str | None = None
    logo: bytes | None = None  # an image file's bytes, checked (domain/clients/branding.py)
    home_url: str | None = None
    privacy_url: str | None = None
    terms_url: str | None = None


@dataclass(frozen=True)
class Changes:
    """What `sites update` changes; None leaves it as it is."""

    redirect_uris: list[str] | None = None
    origins: list[str] | None = None
    post_logout_redirect_uris: list[str] | None = None
    auth_method: str | None = None
    scopes: list[str] | None = None
    first_party: bool | None = None
    looks: Looks | None = None
    backchannel_logout_uri: str | None = None
    email_code_sign_in: bool | None = None


@dataclass(frozen=True)
class Registered:
    site: Site
    client_secret: str | None  # a confidential client's new secret, shown once


def _check_client(registration: Registration) -> None:
    if registration.auth_method not in (PUBLIC, *SECRET_METHODS):
        raise InvalidBody(f"The token endpoint auth method is one of {PUBLIC}, "
                          f"{', '.join(SECRET_METHODS)}.")
    unknown = set(registration.scopes or ()) - set(SUPPORTED_SCOPES)
    if unknown:
        raise InvalidBody(f"Unknown scopes: {' '.join(sorted(unknown))}.")
    if registration.scopes is not None and "openid" not in registration.scopes:
        raise InvalidBody("A client's scopes include openid.")


def _check_name(name: str, reserved: tuple[str, ...]) -> None:
    """A site's name is its client id, and a third-party client's tokens have it as their
    audience: one named like the family's (or the admin API's) audience would get their tokens."""
    if not SITE_NAME.fullmatch(name):
        raise InvalidBody("A site name is lower-case letters, digits and dashes.")
    if name in reserved:
        raise InvalidBody(f"{name} is the audience of the service's own tokens: choose another "
                          "name.")


def check_new_client_id(name: str) -> None:
    """A service client's name: a site's rules, and no site of that name (both are client ids
    at the token endpoint)."""
    _check_name(name, reserved_names())
    if name in all_sites():
        raise InvalidBody(f"{name} is a client site's name: choose another.")


def reserved_names() -> tuple[str, ...]:
    return settings().jwt_audience, settings().admin_audience


def check_settings(client_sites: Any, *, reserved: tuple[str, ...] = (),
                   production: bool = False) -> None:
    """SVC_CLIENT_SITES, checked at start by the rules `sites add` follows: a mistyped entry
    (say `"first_party": "false"`, which would skip consent) stops the service, instead of
    registering something else than its operator meant. RuntimeError, naming the site."""
    if not isinstance(client_sites, dict):
        raise RuntimeError("SVC_CLIENT_SITES must be an object of sites by name.")
    for name, entry in client_sites.items():
        try:
            if not isinstance(name, str):
                raise ValueError("a site name is lower-case letters, digits and dashes")
            _check_name(name, reserved)
            _check_entry(name, entry, production)
        except (InvalidBody, TypeError, ValueError) as error:
            detail = error.detail if isinstance(error, InvalidBody) else str(error)
            raise RuntimeError(f"SVC_CLIENT_SITES[{name!r}]: {detail}") from None


def _check_entry(name: str, entry: Any, production: bool = False) -> None:
    if not isinstance(entry, dict):
        raise TypeError("each site is an object")
    _check_event_endpoints(entry, production)
    for key in ("redirect_uris", "origins", "post_logout_redirect_uris", "scopes"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{key} is a list of strings")
    for uri in (*entry.get("redirect_uris", []), *entry.get("post_logout_redirect_uris", [])):
        _check_uri(uri, origin=False)
    for origin in entry.get("origins", []):
        _check_uri(origin, origin=True)
    for flag in ("first_party", "email_code_sign_in"):
        if not isinstance(entry.get(flag, True), bool):
            raise TypeError(f"{flag} is true or false")
    secret_hash = entry.get("client_secret_sha256")
    if secret_hash is not None and not re.fullmatch(r"[0-9a-f]{64}", str(secret_hash)):
        raise ValueError("client_secret_sha256 is 64 lower-case hex digits")
    looks = {key: entry.get(key) for key in ("display_name", "accent_color", "home_url",
                                             "privacy_url", "terms_url")}
    if not all(isinstance(v, str | None) for v in looks.values()):
        raise TypeError("display_name, accent_color and the URLs are strings")
    _apply_looks(ClientSite(), Looks(**looks))  # checks them; the row is thrown away
    site = _from_settings(name, entry)
    if (site.auth_method != PUBLIC) != (secret_hash is not None):
        raise ValueError("a confidential client needs client_secret_sha256, a public one none")
    _check_client(Registration(auth_method=site.auth_method, scopes=entry.get("scopes")))


WEBHOOK_SECRET = re.compile(r"^whsec_[A-Za-z0-9+/]{32,}={0,2}$")  # 24 bytes or more


def _check_event_endpoints(entry: dict[str, Any], production: bool) -> None:
    """An entry's `webhook_url` (with its `webhook_secret`, whsec_<base64>) and
    `backchannel_logout_uri`, by the rule of app/domain/clients/endpoints.py."""
    for key in ("webhook_url", "backchannel_logout_uri"):
        if key in entry:
            if not isinstance(entry[key], str):
                raise TypeError(f"{key} is a URL")
            # No look-up at start (the factory makes no network calls): at each delivery.
            check_endpoint(entry[key], production=production, resolve=False)
    secret = entry.get("webhook_secret")
    if ("webhook_url" in entry) != (secret is not None):
        raise ValueError("webhook_url and webhook_secret go together")
    if secret is not None and not WEBHOOK_SECRET.fullmatch(str(secret)):
        raise ValueError("webhook_secret is whsec_ and 24 or more random bytes in base64")


@writes
def add_site(name: str, redirect_uris: list[str], origins: list[str],
             registration: Registration | None = None) -> Registered:
    """Register a new site; InvalidBody if the name is taken (`sites update` changes one). A
    confidential client gets a secret, shown once."""
    registration = registration or Registration()
    _check_name(name, reserved_names())
    if db.session.get(ServiceClient, name) is not None:
        raise InvalidBody(f"{name} is a service client's name: choose another.")
    if name in all_sites():
        raise InvalidBody(f"A site called {name} exists: `sites update {name}` changes it"
                          + (" (it comes from SVC_CLIENT_SITES: change it there)."
                             if all_sites()[name].from_settings else "."))
    row = ClientSite(name=name, created_at=now(), token_endpoint_auth_method=PUBLIC,
                     first_party=True)
    return _apply(row, Changes(redirect_uris, origins, registration.post_logout_redirect_uris,
                               registration.auth_method, registration.scopes,
                               registration.first_party, registration.looks,
                               registration.backchannel_logout_uri,
                               registration.email_code_sign_in),
                  clear_unset_client=True)


@writes
def update_site(name: str, changes: Changes) -> Registered:
    """Change what `changes` names and nothing else."""
    existing = all_sites().get(name)
    if existing is not None and existing.from_settings:
        raise InvalidBody(f"{name} comes from SVC_CLIENT_SITES: change it there.")
    row = db.session.get(ClientSite, name)
    if row is None:
        raise InvalidBody(f"No site called {name} was added with `sites add`.")
    return _apply(row, changes)


def _apply(row: ClientSite, changes: Changes, *, clear_unset_client: bool = False) -> Registered:
    if changes.redirect_uris is not None:
        if not changes.redirect_uris:
            raise InvalidBody("A site needs at least one redirect URI.")
        row.redirect_uris = [_check_uri(u, origin=False) for u in changes.redirect_uris]
    if changes.origins is not None:
        row.origins = [_check_uri(o, origin=True) for o in changes.origins]
    if changes.post_logout_redirect_uris is not None or clear_unset_client:
        row.post_logout_redirect_uris = None if changes.post_logout_redirect_uris is None else [
            _check_uri(u, origin=False) for u in changes.post_logout_redirect_uris]
    if changes.scopes is not None or clear_unset_client:
        row.scopes = changes.scopes
    if changes.first_party is not None:
        row.first_party = changes.first_party
    if changes.email_code_sign_in is not None:
        row.email_code_sign_in = changes.email_code_sign_in
    if changes.auth_method is not None:
        row.token_endpoint_auth_method = changes.auth_method
    if changes.backchannel_logout_uri is not None:
        row.backchannel_logout_uri = check_endpoint(changes.backchannel_logout_uri)
    _check_client(Registration(auth_method=row.token_endpoint_auth_method, scopes=row.scopes))
    _apply_looks(row, changes.looks or Looks())
    secret = None
    if row.token_endpoint_auth_method == PUBLIC:
        row.client_secret_hash = None
    elif row.client_secret_hash is None:
        secret = tokens.new_secret()
        row.client_secret_hash = tokens.hash_secret(secret)
    db.session.add(row)
    db.session.flush()
    note_sites_changed()
    return Registered(_from_row(row), secret)


def _apply_looks(row: ClientSite, looks: Looks) -> None:
    if looks.display_name is not None:
        name = looks.display_name.strip()
        if not 1 <= len(name) <= 80 or not text.is_printable(name):
            raise InvalidBody("A display name is 1 to 80 printable characters.")
        row.display_name = name
    if looks.accent_color is not None:
        row.accent_color = branding.checked_colour(looks.accent_color)
    if looks.logo is not None:
        row.logo_type, row.logo = branding.checked_logo(looks.logo)
    for field in ("home_url", "privacy_url", "terms_url"):
        value = getattr(looks, field)
        if value is not None:
            setattr(row, field, _check_uri(value, origin=False))


@writes
def rotate_secret(name: str) -> str:
    """A new secret for a confidential client added with `sites add`; the old one stops at
    once."""
    row = db.session.get(ClientSite, name)
    if row is None or row.token_endpoint_auth_method == PUBLIC:
        raise InvalidBody(f"{name} is no confidential client added with `sites add`.")
    secret = tokens.new_secret()
    row.client_secret_hash = tokens.hash_secret(secret)
    return secret


@writes
def remove_site(name: str) -> bool:
    row = db.session.get(ClientSite, name)
    if row is None:
        return False
    db.session.delete(row)
    note_sites_changed()
    return True
