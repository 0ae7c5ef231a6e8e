"""Pushed authorization requests (RFC 9126): a client posts its request to the token side first,
and the browser carries only a request_uri, so nobody on the way can read or change the request.
Why: docs/architecture/design-notes.md, "OpenID Connect authorization and pushed requests"."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta

from sqlalchemy import ColumnElement, delete, func, select

from app.db import locks
from app.db.rows import claim_once
from app.db.transactions import writes
from app.domain.clock import now
from app.domain.oidc.errors import InvalidRequestUri, TooManyPushedRequests
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import PushedRequest

PREFIX = "urn:ietf:params:oauth:request_uri:"
TTL = timedelta(minutes=10)
MAX_PARAMS = 8192  # characters of the request's JSON: more than any real request needs


def _hash(untrusted_request_uri: str) -> str | None:
    if not untrusted_request_uri.startswith(PREFIX):
        return None
    return tokens.hash_secret(untrusted_request_uri.removeprefix(PREFIX))


@writes
def push(client_id: str, params: dict[str, str], address: str | None) -> str:
    """Keep a validated authorization request of `client_id`; its request_uri. `address`: where
    a public client's push came from (its pushes are capped per address too), None for a
    confidential client's. TooManyPushedRequests when a cap is reached. The counts and the
    insert hold the client's lock, then the address's (locks.hold): concurrent pushes cannot go
    past a cap."""
    at = now()
    locks.hold(f"pushed-requests:client:{client_id}")
    db.session.execute(delete(PushedRequest).where(PushedRequest.client_id == client_id,
                                                   PushedRequest.expires_at <= at))
    _check_cap(PushedRequest.client_id == client_id, settings().pushed_requests_per_client, at)
    if address is not None:
        locks.hold(f"pushed-requests:address:{address}")
        _check_cap(PushedRequest.address == address, settings().pushed_requests_per_address, at)
    handle = tokens.new_secret()
    db.session.add(PushedRequest(handle_hash=tokens.hash_secret(handle), client_id=client_id,
                                 params=json.dumps(params), created_at=at,
                                 expires_at=at + TTL, address=address))
    return PREFIX + handle


def _check_cap(whose: ColumnElement[bool], cap: int, at: datetime) -> None:
    """TooManyPushedRequests if `whose` live (unused, unexpired) requests reach `cap`, with
    the seconds until the first of them expires."""
    count, first_expiry = db.session.execute(
        select(func.count(), func.min(PushedRequest.expires_at)).where(
            whose, PushedRequest.used_at.is_(None), PushedRequest.expires_at > at)).one()
    if count >= cap:
        raise TooManyPushedRequests(math.ceil((first_expiry - at).total_seconds()))


def params_of(untrusted_request_uri: str, client_id: str | None) -> dict[str, str]:
    """The parameters of a live pushed request of `client_id` (read only); InvalidRequestUri
    for anything else."""
    handle_hash = _hash(untrusted_request_uri)
    pushed = db.session.get(PushedRequest, handle_hash) if handle_hash else None
    if (pushed is None or pushed.client_id != client_id or pushed.used_at is not None
            or pushed.expires_at <= now()):
        raise InvalidRequestUri()
    params: dict[str, str] = json.loads(pushed.params)
    return params


def spend(request_uri: str) -> None:
    """Mark the pushed request used, inside the caller's unit of work (the code's issue);
    InvalidRequestUri if it already was (two tabs racing with one request_uri) or expired."""
    handle_hash = _hash(request_uri)
    if handle_hash is None or not claim_once(
            PushedRequest, (PushedRequest.handle_hash == handle_hash)
            & (PushedRequest.expires_at > now()), PushedRequest.used_at, used_at=now()):
        raise InvalidRequestUri()
