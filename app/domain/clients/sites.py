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

from sqlalchemy import select

from app.domain.clients.branding import Branding
from app.domain.clients.errors import InvalidRedirectUri, UnknownCallback
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import ClientSite

SITE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
DEFAULT_SCOPES = ("openid", "email", "profile")
SUPPORTED_SCOPES = ("openid", "email", "profile")
# OpenID Connect Core §11: a client asking to stay signed in. Every site's sign-in comes with a
# refresh token, so any site may ask for it without registering it; a third-party site asks the
# person's consent for it as for any scope. It changes nothing about the tokens.
OFFLINE_ACCESS = "offline_access"
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
    branding: Branding = Branding()
    webhook_url: str | None = None  # its signing secrets: app/domain/clients/webhooks.py
    backchannel_logout_uri: str | None = None
    email_code_sign_in: bool = True  # whether its sign-ins may use a mailed code

    @property
    def display_name(self) -> str:
        return self.branding.display_name or self.name

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
        """Where a person goes back to the site to start a sign-in of its own: the home it
        registered, its first registered origin, or else the origin of its first redirect
        URI."""
        if self.branding.home_url:
            return self.branding.home_url
        if self.origins:
            return f"{self.origins[0]}/"
        if self.redirect_uris:
            parts = urlsplit(self.redirect_uris[0])
            return f"{parts.scheme}://{parts.netloc}/"
        return None


def site_logo(name: str) -> tuple[str, bytes] | None:
    """A registered site's logo: its media type and bytes (checked when it was registered)."""
    row = db.session.get(ClientSite, name) if SITE_NAME.fullmatch(name) else None
    if row is None or row.logo is None or row.logo_type is None:
        return None
    return row.logo_type, row.logo


def _optional(values: Any) -> tuple[str, ...] | None:
    return None if values is None else tuple(values)


def _from_row(row: ClientSite) -> Site:
    return Site(row.name, tuple(row.redirect_uris), tuple(row.origins),
                post_logout_uris=_optional(row.post_logout_redirect_uris),
                client_secret_hash=row.client_secret_hash,
                auth_method=row.token_endpoint_auth_method,
                allowed_scopes=_optional(row.scopes) or DEFAULT_SCOPES,
                first_party=row.first_party,
                branding=Branding(row.display_name, row.accent_color, row.logo_type,
                                  row.home_url, row.privacy_url, row.terms_url),
                webhook_url=row.webhook_url, backchannel_logout_uri=row.backchannel_logout_uri,
                email_code_sign_in=row.email_code_sign_in)


def _from_settings(name: str, entry: dict[str, Any]) -> Site:
    """An entry of SVC_CLIENT_SITES: `redirect_uris`, `origins`, and optionally
    `post_logout_redirect_uris`, `scopes`, `first_party`, `webhook_url` with `webhook_secret`,
    `backchannel_logout_uri`, `email_code_sign_in`, and for a confidential client
    `client_secret_sha256` (hex) with `token_endpoint_auth_method`."""
    secret_hash = entry.get("client_secret_sha256")
    method = entry.get("token_endpoint_auth_method",
                       SECRET_METHODS[0] if secret_hash else PUBLIC)
    return Site(name, tuple(entry.get("redirect_uris", ())), tuple(entry.get("origins", ())),
                from_settings=True,
                post_logout_uris=_optional(entry.get("post_logout_redirect_uris")),
                client_secret_hash=secret_hash, auth_method=method,
                allowed_scopes=_optional(entry.get("scopes")) or DEFAULT_SCOPES,
                first_party=bool(entry.get("first_party", True)),
                branding=Branding(entry.get("display_name"), entry.get("accent_color"), None,
                                  entry.get("home_url"), entry.get("privacy_url"),
                                  entry.get("terms_url")),
                webhook_url=entry.get("webhook_url"),
                backchannel_logout_uri=entry.get("backchannel_logout_uri"),
                email_code_sign_in=bool(entry.get("email_code_sign_in", True)))


def all_sites() -> dict[str, Site]:
    sites = {row.name: _from_row(row) for row in db.session.scalars(select(ClientSite))}
    for name, entry in settings().client_sites.items():
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


def family_site(untrusted_name: str | None) -> Site | None:
    """The family's own site registered under exactly this name, or None: all that a link
    anyone can write (a mailed link's `site`) may name. A third party is named on our pages
    in its own authorization only."""
    site = registered_site(untrusted_name)
    return site if site is not None and site.first_party else None


def site_of_redirect_uri(redirect_uri: str) -> Site | None:
    """The site that registered this redirect URI."""
    return next((site for site in all_sites().values() if redirect_uri in site.redirect_uris),
                None)


def site_of_origin(untrusted_origin: str | None) -> Site | None:
    """The site that registered this origin (a browser's call names it in `Origin`), if any."""
    if not untrusted_origin:
        return None
    return next((site for site in all_sites().values() if untrusted_origin in site.origins),
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
