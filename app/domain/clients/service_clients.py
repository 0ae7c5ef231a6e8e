"""Service clients: programs (billing, support scripts) that call the admin API with a token of
their own (client_credentials), limited to the admin scopes they were registered with. They have
no redirect URI and sign no person in, so they live apart from the sites."""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from enum import StrEnum

from sqlalchemy import select

from app.db.transactions import writes
from app.domain.clients import registration, sites
from app.domain.clock import now
from app.domain.errors import AuthError, InvalidBody
from app.domain.services import services
from app.domain.tokens import tokens
from app.domain.tokens.errors import InsufficientScope, InvalidToken
from app.domain.tokens.tokens import ClientClaims
from app.extensions import db
from app.infra.settings import settings
from app.models import ServiceClient

AUTH_METHOD = "client_secret_basic"  # HTTP Basic: what billing and support scripts send


class AdminScope(StrEnum):
    """What a service client may do through the admin API."""

    USERS_READ = "users:read"
    USERS_WRITE = "users:write"
    USERS_PLAN = "users:plan"  # all that billing needs
    SESSIONS_REVOKE = "sessions:revoke"
    AUDIT_READ = "audit:read"


@dataclass(frozen=True)
class Service:
    name: str
    scopes: tuple[str, ...]
    secret_hash: str
    registration: str  # new with each `add`; its tokens carry it

    @property
    def client_id(self) -> str:
        return self.name

    def check_secret(self, untrusted_secret: str) -> bool:
        return hmac.compare_digest(tokens.hash_secret(untrusted_secret), self.secret_hash)


def authenticate(untrusted_token: str, needed: AdminScope, *or_: AdminScope) -> Service:
    """The service client behind an admin API token, if the token holds `needed` (or one of
    `or_`): InvalidToken for anything but a live token of a registered service client (a
    person's, an ID token, a site's own, a removed client's, even once another is added under
    its name), InsufficientScope naming `needed` for one without the scope."""
    claims = services().access_tokens.verify_client_token(
        untrusted_token, now(), settings().admin_audience)
    service = _issued_to(claims)
    if service is None:
        raise InvalidToken()
    held = claims.scopes & set(service.scopes)  # a scope removed since stops at once
    if not held & {needed, *or_}:
        raise InsufficientScope(needed)
    return service


def caller_of(untrusted_token: str) -> str | None:
    """The client id of a valid admin token (whatever its scopes), for counting its requests:
    never a removed client's, whose requests must not use up its successor's budget."""
    try:
        claims = services().access_tokens.verify_client_token(
            untrusted_token, now(), settings().admin_audience)
    except AuthError:
        return None
    service = _issued_to(claims)
    return service.client_id if service is not None else None


def _issued_to(claims: ClientClaims) -> Service | None:
    """The registered service client the token was issued to, if it still is registered: not
    one added later under the same name."""
    service = find(claims.client_id)
    if service is None or not hmac.compare_digest(claims.registration, service.registration):
        return None
    return service


@dataclass(frozen=True)
class Registered:
    service: Service
    client_secret: str  # shown once


def _of(row: ServiceClient) -> Service:
    return Service(row.name, tuple(row.scopes), row.secret_hash, row.registration)


def find(untrusted_name: str | None) -> Service | None:
    # Only a well-formed name reaches the database (PostgreSQL cannot even compare a NUL).
    well_formed = untrusted_name is not None and sites.SITE_NAME.fullmatch(untrusted_name)
    row = db.session.get(ServiceClient, untrusted_name) if well_formed else None
    return _of(row) if row is not None else None


def all_services() -> list[Service]:
    return [_of(row) for row in db.session.scalars(select(ServiceClient)
                                                   .order_by(ServiceClient.name))]


def checked_scopes(scopes: list[str]) -> list[str]:
    unknown = set(scopes) - set(AdminScope)
    if unknown or not scopes:
        raise InvalidBody(f"A service client's scopes are some of {' '.join(AdminScope)}"
                          + (f"; unknown: {' '.join(sorted(unknown))}." if unknown else "."))
    return list(dict.fromkeys(scopes))


@writes
def add(name: str, scopes: list[str]) -> Registered:
    """Register a service client; InvalidBody if the name is taken (by a site too: both are
    client ids at the token endpoint)."""
    registration.check_new_client_id(name)
    if db.session.get(ServiceClient, name) is not None:
        raise InvalidBody(f"A service client called {name} exists: `clients remove` it first, "
                          "or `clients rotate-secret`.")
    secret = tokens.new_secret()
    row = ServiceClient(name=name, secret_hash=tokens.hash_secret(secret),
                        scopes=checked_scopes(scopes), created_at=now(),
                        registration=secrets.token_hex(16))
    db.session.add(row)
    db.session.flush()
    return Registered(_of(row), secret)


@writes
def rotate_secret(name: str) -> str:
    """A new secret; the old one stops at once (tokens issued with it live until they expire,
    at most the access tokens' lifetime)."""
    row = db.session.get(ServiceClient, name)
    if row is None:
        raise InvalidBody(f"No service client is called {name}.")
    secret = tokens.new_secret()
    row.secret_hash = tokens.hash_secret(secret)
    return secret


@writes
def remove(name: str) -> bool:
    """Remove a service client: its tokens stop at once (the admin API asks for it each call),
    and for good: a client added later under the name has another registration."""
    row = db.session.get(ServiceClient, name)
    if row is None:
        return False
    db.session.delete(row)
    return True
