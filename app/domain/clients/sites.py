"""The client-site registry: the redirect URIs and origins that are ours to send people back to,
and each site as an OAuth / OpenID Connect client (`client_id` = the site's name). Matching is
exact, character for character, so no look-alike URI or origin ever matches.
Why: docs/architecture/design-notes.md, "Sites"."""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from flask import current_app
from sqlalchemy import select

from app.db.transactions import writes
from app.domain.clients.endpoints import check_endpoint
from app.domain.clock import now
from app.domain.errors import InvalidBody, InvalidRedirectUri, UnknownCallback
from app.domain.tokens import tokens
from app.extensions import db
from app.models import ClientSite, ServiceClient

SITE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
DEFAULT_SCOPES = ("openid", "email", "profile")
SUPPORTED_SCOPES = ("openid", "email", "profile")
PUBLIC = "none"  # the token endpoint auth method of a public client
SECRET_METHODS = ("client_secret_basic", "client_secret_post")


@dataclass(frozen=True)
class Site:
    name: str
    redirect_uris: tuple[str, ...]
    origins: tuple[str, ...]
    from_settings: bool = False
    post_logout_uris: tuple[str, ...] | None = None  # None: the redirect URIs
    client_secret_hash: str | None = field(default=None, repr=False)
    auth_method: str = PUBLIC
    allowed_scopes: tuple[str, ...] = DEFAULT_SCOPES
    first_party: bool = True
    webhook_url: str | None = None  # its signing secrets: app/domain/clients/webhooks.py
    backchannel_logout_uri: str | None = None

    @property
    def client_id(self) -> str:
        return self.name

    @property
    def is_public(self) -> bool:
        return self.auth_method == PUBLIC

    @property
    def uses_handoff(self) -> bool:
        """Whether the handoff (a code through `redirect_uri`/`callback`, traded at
        exchange-code) may sign people in to this site: the family's own public sites only. A
        third-party client signs in through /oauth2 with consent and its scopes, and a
        confidential one through /oauth2/token, where its secret is asked."""
        return self.first_party and self.is_public

    @property
    def post_logout_redirect_uris(self) -> tuple[str, ...]:
        return self.redirect_uris if self.post_logout_uris is None else self.post_logout_uris

    def check_secret(self, untrusted_secret: str) -> bool:
        """Whether this is the client's secret (a public client has none)."""
        if self.client_secret_hash is None:
            return False
        return hmac.compare_digest(tokens.hash_secret(untrusted_secret), self.client_secret_hash)

    @property
    def home(self) -> str | None:
        """Where a person goes back to the site to start a sign-in of its own: its first
        registered origin, or else the origin of its first redirect URI."""
        if self.origins:
            return f"{self.origins[0]}/"
        if self.redirect_uris:
            parts = urlsplit(self.redirect_uris[0])
            return f"{parts.scheme}://{parts.netloc}/"
        return None


def _optional(values: Any) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _from_row(row: ClientSite) -> Site:
    return Site(row.name, tuple(row.redirect_uris), tuple(row.origins),
                post_logout_uris=_optional(row.post_logout_redirect_uris),
                client_secret_hash=row.client_secret_hash,
                auth_method=row.token_endpoint_auth_method,
                allowed_scopes=_optional(row.scopes) or DEFAULT_SCOPES,
                first_party=row.first_party, webhook_url=row.webhook_url,
                backchannel_logout_uri=row.backchannel_logout_uri)


def _from_settings(name: str, entry: dict[str, Any]) -> Site:
    """An entry of SVC_CLIENT_SITES: `redirect_uris`, `origins`, and optionally
    `post_logout_redirect_uris`, `scopes`, `first_party`, `webhook_url` with `webhook_secret`,
    `backchannel_logout_uri`, and for a confidential client `client_secret_sha256` (hex) with
    `token_endpoint_auth_method`."""
    secret_hash = entry.get("client_secret_sha256")
    method = entry.get("token_endpoint_auth_method",
                       SECRET_METHODS[0] if secret_hash else PUBLIC)
    return Site(name, tuple(entry.get("redirect_uris", ())), tuple(entry.get("origins", ())),
                from_settings=True,
                post_logout_uris=_optional(entry.get("post_logout_redirect_uris")),
                client_secret_hash=secret_hash, auth_method=method,
                allowed_scopes=_optional(entry.get("scopes")) or DEFAULT_SCOPES,
                first_party=bool(entry.get("first_party", True)),
                webhook_url=entry.get("webhook_url"),
                backchannel_logout_uri=entry.get("backchannel_logout_uri"))


def all_sites() -> dict[str, Site]:
    sites = {row.name: _from_row(row) for row in db.session.scalars(select(ClientSite))}
    for name, entry in (current_app.config["CLIENT_SITES"] or {}).items():
        sites[name] = _from_settings(name, entry)
    return sites


def handoff_redirect_uri(untrusted_uri: str | None) -> str:
    """The redirect URI, if it is exactly one that a site using the handoff registered (and no
    other kind of site did); InvalidRedirectUri otherwise."""
    if untrusted_uri and handoff_site_of(untrusted_uri) is not None:
        return untrusted_uri
    raise InvalidRedirectUri()


def handoff_site_of(redirect_uri: str) -> Site | None:
    """The site a handoff code sent to `redirect_uri` is for, if that site may use the
    handoff. A URI that a site not using it registered too is no handoff's: the code would
    reach a client that never had to ask for consent or show its secret."""
    owners = [site for site in all_sites().values() if redirect_uri in site.redirect_uris]
    if not owners or not all(site.uses_handoff for site in owners):
        return None
    return owners[0]


def registered_site(untrusted_name: str | None) -> Site | None:
    """The site registered under exactly this name, or None."""
    return all_sites().get(untrusted_name or "")


def site_of_redirect_uri(redirect_uri: str) -> Site | None:
    """The site that registered this redirect URI."""
    return next((site for site in all_sites().values() if redirect_uri in site.redirect_uris),
                None)


def callback_redirect_uri(untrusted_name: str | None) -> str:
    """v1's `callback=<site>`: the named site's first redirect URI, or UnknownCallback (for a
    site that does not use the handoff too)."""
    site = all_sites().get(untrusted_name or "")
    if site is None or not site.redirect_uris or not site.uses_handoff \
            or handoff_site_of(site.redirect_uris[0]) is None:
        raise UnknownCallback(f"“{untrusted_name[:64]}” is not a registered client site."
                              if untrusted_name else None)
    return site.redirect_uris[0]


def is_family_origin(untrusted_origin: str) -> bool:
    """Whether this is the origin of one of the family's own sites, the only ones that call
    the family API from a browser (CORS)."""
    return any(untrusted_origin in site.origins
               for site in all_sites().values() if site.first_party)


# Registering (CLI) -----------------------------------------------------------------------------

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
    backchannel_logout_uri: str | None = None


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
    if not SITE_NAME.match(name):
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
    return current_app.config["JWT_AUDIENCE"], current_app.config["ADMIN_AUDIENCE"]


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
    for key in ("redirect_uris", "origins", "post_logout_redirect_uris", "scopes"):
        value = entry.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{key} is a list of strings")
    for uri in (*entry.get("redirect_uris", []), *entry.get("post_logout_redirect_uris", [])):
        _check_uri(uri, origin=False)
    for origin in entry.get("origins", []):
        _check_uri(origin, origin=True)
    if not isinstance(entry.get("first_party", True), bool):
        raise TypeError("first_party is true or false")
    _check_event_endpoints(entry, production)
    secret_hash = entry.get("client_secret_sha256")
    if secret_hash is not None and not re.fullmatch(r"[0-9a-f]{64}", str(secret_hash)):
        raise ValueError("client_secret_sha256 is 64 lower-case hex digits")
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
    if secret is not None and not WEBHOOK_SECRET.match(str(secret)):
        raise ValueError("webhook_secret is whsec_ and 24 or more random bytes in base64")


@writes
def add_site(name: str, redirect_uris: list[str], origins: list[str],
             registration: Registration | None = None) -> Registered:
    """Register a site (or change one added before). A confidential client gets a new secret
    when it had none; `rotate_secret` replaces one."""
    registration = registration or Registration()
    _check_name(name, reserved_names())
    if db.session.get(ServiceClient, name) is not None:
        raise InvalidBody(f"{name} is a service client's name: choose another.")
    if not redirect_uris:
        raise InvalidBody("A site needs at least one redirect URI.")
    _check_client(registration)
    existing = all_sites().get(name)
    if existing and existing.from_settings:
        raise InvalidBody(f"{name} comes from SVC_CLIENT_SITES: change it there.")
    row: Any = db.session.get(ClientSite, name) or ClientSite(name=name, created_at=now())
    row.redirect_uris = [_check_uri(u, origin=False) for u in redirect_uris]
    row.origins = [_check_uri(o, origin=True) for o in origins]
    row.post_logout_redirect_uris = (
        None if registration.post_logout_redirect_uris is None
        else [_check_uri(u, origin=False) for u in registration.post_logout_redirect_uris])
    row.token_endpoint_auth_method = registration.auth_method
    row.scopes = registration.scopes
    row.first_party = registration.first_party
    uri = registration.backchannel_logout_uri
    row.backchannel_logout_uri = None if uri is None else check_endpoint(uri)
    secret = None
    if registration.auth_method == PUBLIC:
        row.client_secret_hash = None
    elif row.client_secret_hash is None:
        secret = tokens.new_secret()
        row.client_secret_hash = tokens.hash_secret(secret)
    db.session.add(row)
    db.session.flush()
    return Registered(_from_row(row), secret)


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
    return True
