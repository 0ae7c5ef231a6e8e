"""A client site's webhook endpoint and its signing secrets, by the Standard Webhooks
specification (https://www.standardwebhooks.com): a secret is `whsec_<base64 of 32 random
bytes>`; a delivery is signed `v1,<base64 HMAC-SHA256>` over `id.timestamp.body`. A secret is
kept sealed under the service's SECRET_KEY and the site's name, so a database dump alone shows
none; after a rotation the previous secret signs too, for a day."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from cryptography.exceptions import InvalidTag

from app.db.transactions import writes
from app.domain.clients.endpoints import check_endpoint
from app.domain.clients.sites import Site
from app.domain.clock import now
from app.domain.errors import InvalidBody
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import ClientSite

SECRET_PREFIX = "whsec_"  # noqa: S105 (a prefix)
ROTATION_OVERLAP = timedelta(days=1)  # how long the previous secret still signs
_SEAL_PURPOSE = "webhook secret"


@dataclass(frozen=True)
class Endpoint:
    url: str
    secrets: tuple[str, ...] = field(repr=False)  # the current one first


def new_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def signature(secrets_in_force: tuple[str, ...], message_id: str, timestamp: int,
              body: str) -> str:
    """The `webhook-signature` header: one `v1,<signature>` for each secret, space-separated."""
    signed = f"{message_id}.{timestamp}.{body}".encode()
    return " ".join(
        "v1," + base64.b64encode(hmac.new(_key(secret), signed, hashlib.sha256).digest()).decode()
        for secret in secrets_in_force)


def signed_headers(endpoint: Endpoint, message_id: str, body: str, at: datetime) -> dict[str, str]:
    timestamp = int(at.timestamp())
    return {"webhook-id": message_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(endpoint.secrets, message_id, timestamp, body),
            "content-type": "application/json"}


def endpoint_of(site: Site) -> Endpoint | None:
    """Where the site's webhooks go and the secrets that sign them now; None without an
    endpoint, or when its secret was sealed under another SECRET_KEY (set it again)."""
    if site.webhook_url is None:
        return None
    if site.from_settings:
        entry = settings().client_sites[site.name]
        return Endpoint(site.webhook_url, (str(entry["webhook_secret"]),))
    row = db.session.get(ClientSite, site.name)
    if row is None or row.webhook_secret_sealed is None:
        return None
    try:
        found = [_unseal(site.name, row.webhook_secret_sealed)]
        if row.webhook_previous_sealed is not None and row.webhook_previous_until is not None \
                and row.webhook_previous_until > now():
            found.append(_unseal(site.name, row.webhook_previous_sealed))
    except InvalidTag:
        return None
    return Endpoint(site.webhook_url, tuple(found))


# Registering (CLI) -----------------------------------------------------------------------------

@writes
def set_webhook(name: str, url: str) -> str:
    """Point a site added with `sites add` at a webhook endpoint, with a new secret (returned,
    to show once); the endpoint's old secret stops at once."""
    row = _site_row(name)
    row.webhook_url = check_endpoint(url)
    row.webhook_secret_sealed, secret = _new_sealed(name)
    row.webhook_previous_sealed = row.webhook_previous_until = None
    return secret


@writes
def rotate_secret(name: str) -> str:
    """A new secret for a site's endpoint; the one it replaces also signs for a day."""
    row = _site_row(name)
    if row.webhook_url is None or row.webhook_secret_sealed is None:
        raise InvalidBody(f"{name} has no webhook endpoint: `sites set-webhook` first.")
    row.webhook_previous_sealed = row.webhook_secret_sealed
    row.webhook_previous_until = now() + ROTATION_OVERLAP
    row.webhook_secret_sealed, secret = _new_sealed(name)
    return secret


@writes
def remove_webhook(name: str) -> None:
    row = _site_row(name)
    row.webhook_url = row.webhook_secret_sealed = None
    row.webhook_previous_sealed = row.webhook_previous_until = None


def _site_row(name: str) -> ClientSite:
    if name in settings().client_sites:
        raise InvalidBody(f"{name} comes from SVC_CLIENT_SITES: set webhook_url and "
                          "webhook_secret there.")
    row = db.session.get(ClientSite, name)
    if row is None:
        raise InvalidBody(f"No site called {name} was added with `sites add`.")
    return row


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def _holder(name: str) -> str:
    return f"{settings().secret_key}\0{name}"


def _new_sealed(name: str) -> tuple[bytes, str]:
    secret = new_secret()
    return tokens.seal(_holder(name), secret, purpose=_SEAL_PURPOSE), secret


def _unseal(name: str, sealed: bytes) -> str:
    return tokens.unseal(_holder(name), sealed, purpose=_SEAL_PURPOSE)
