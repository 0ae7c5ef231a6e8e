"""The client-site registry: which redirect URIs and origins are ours to send people back to.

Sites come from SVC_CLIENT_SITES and from `flask sites add` (the client_sites table). Matching is
exact, character for character: no prefixes, no normalisation, no case folding, so `//evil`,
`good.example@evil`, `good.example.evil`, a trailing slash or an encoded byte never match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from flask import current_app
from sqlalchemy import select

from app.db.transactions import writes
from app.domain.clock import now
from app.domain.errors import InvalidBody, InvalidRedirectUri, UnknownCallback
from app.extensions import db
from app.models import ClientSite

SITE_NAME = re.compile(r"^[a-z][a-z0-9-]{0,63}$")


@dataclass(frozen=True)
class Site:
    name: str
    redirect_uris: tuple[str, ...]
    origins: tuple[str, ...]
    from_settings: bool = False

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


def all_sites() -> dict[str, Site]:
    sites = {row.name: Site(row.name, tuple(row.redirect_uris), tuple(row.origins))
             for row in db.session.scalars(select(ClientSite))}
    for name, entry in (current_app.config["CLIENT_SITES"] or {}).items():
        sites[name] = Site(name, tuple(entry.get("redirect_uris", ())),
                           tuple(entry.get("origins", ())), from_settings=True)
    return sites


def registered_redirect_uri(untrusted_uri: str | None) -> str:
    """The redirect URI, if it is exactly one a site registered; InvalidRedirectUri otherwise."""
    if untrusted_uri:
        for site in all_sites().values():
            if untrusted_uri in site.redirect_uris:
                return untrusted_uri
    raise InvalidRedirectUri()


def registered_site(untrusted_name: str | None) -> Site | None:
    """The site registered under exactly this name, or None."""
    return all_sites().get(untrusted_name or "")


def site_of_redirect_uri(redirect_uri: str) -> Site | None:
    """The site that registered this redirect URI."""
    return next((site for site in all_sites().values() if redirect_uri in site.redirect_uris),
                None)


def callback_redirect_uri(untrusted_name: str | None) -> str:
    """v1's `callback=<site>`: the named site's first redirect URI, or UnknownCallback."""
    site = all_sites().get(untrusted_name or "")
    if site is None or not site.redirect_uris:
        raise UnknownCallback(f"“{untrusted_name[:64]}” is not a registered client site."
                              if untrusted_name else None)
    return site.redirect_uris[0]


def is_registered_origin(untrusted_origin: str) -> bool:
    return any(untrusted_origin in site.origins for site in all_sites().values())


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


@writes
def add_site(name: str, redirect_uris: list[str], origins: list[str]) -> Site:
    if not SITE_NAME.match(name):
        raise InvalidBody("A site name is lower-case letters, digits and dashes.")
    if not redirect_uris:
        raise InvalidBody("A site needs at least one redirect URI.")
    existing = all_sites().get(name)
    if existing and existing.from_settings:
        raise InvalidBody(f"{name} comes from SVC_CLIENT_SITES: change it there.")
    row: Any = db.session.get(ClientSite, name) or ClientSite(name=name, created_at=now())
    row.redirect_uris = [_check_uri(u, origin=False) for u in redirect_uris]
    row.origins = [_check_uri(o, origin=True) for o in origins]
    db.session.add(row)
    return Site(name, tuple(row.redirect_uris), tuple(row.origins))


@writes
def remove_site(name: str) -> bool:
    row = db.session.get(ClientSite, name)
    if row is None:
        return False
    db.session.delete(row)
    return True
