"""Account events to the client sites. The outbox's events lane is fed from the account events
not yet dispatched: each is fanned out, once, to its deliveries (a webhook to each
site with an endpoint that may know the account; a back-channel logout to each OpenID Connect
client whose sessions a `sessions.ended` ended), and each delivery is then tried, retried and
kept as failed like a mail job (app/infra/outbox_worker.py).
Why: docs/architecture/design-notes.md, "Events to client sites"."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import requests
from sqlalchemy import select

from app.db.rows import claim_once, insert_values
from app.db.transactions import writes
from app.domain import events
from app.domain.clients import sites, webhooks
from app.domain.clients.endpoints import UnsafeEndpoint, check_endpoint
from app.domain.clock import system_clock
from app.domain.events import EventType
from app.domain.oidc import backchannel
from app.extensions import db
from app.infra.lanes import EVENTS, Job, Lane, due_now
from app.infra.settings import Settings, settings
from app.infra.site_http import Refused, post
from app.models import AccountEvent, ConsentGrant, Delivery
from app.models.types import new_id

log = logging.getLogger("svc_auth.events")
FAN_OUT_BATCH = 100  # events fanned out per look; the worker looks again at once when woken


def lane(config: Settings) -> Lane:
    """The outbox's events lane. While no site has an endpoint for events, a commit does not
    wake it: its poll marks the events dispatched. Each fan-out looks at the sites again (one
    may be added with `flask sites add`)."""
    found = Lane(EVENTS, Delivery, perform, attempts=config.webhook_attempts,
                 retry_delay=config.webhook_retry_delay, max_delay=config.webhook_retry_max_delay,
                 expected_failures=(requests.RequestException, Refused, UnsafeEndpoint),
                 log=log, woken_by_commits=any(
                     "webhook_url" in entry or "backchannel_logout_uri" in entry
                     for entry in config.client_sites.values()))

    def feed(at: datetime) -> int:
        fanned = fan_out(at)
        if fanned:
            found.woken_by_commits = any(site.webhook_url or site.backchannel_logout_uri
                                         for site in sites.all_sites().values())
        return fanned

    found.feed = feed
    return found


# The fan-out ---------------------------------------------------------------------------------

def fan_out(at: datetime) -> int:
    """Write the deliveries of the events not yet dispatched; how many events were."""
    waiting = list(db.session.scalars(
        select(AccountEvent.id).where(AccountEvent.dispatched_at.is_(None))
        .order_by(AccountEvent.occurred_at).limit(FAN_OUT_BATCH)))
    db.session.rollback()
    return sum(_fan_out_one(event_id, at) for event_id in waiting)


@writes
def _fan_out_one(event_id: str, at: datetime) -> bool:
    """One event's deliveries, in one transaction with marking it dispatched: whichever worker
    marks it writes them, once."""
    if not claim_once(AccountEvent, AccountEvent.id == event_id, AccountEvent.dispatched_at,
                      dispatched_at=at):
        return False
    event = db.session.get(AccountEvent, event_id)
    for (kind, site, sid), data in (_targets(event).items() if event is not None else ()):
        insert_values(Delivery, id=new_id(), kind=kind, event_id=event_id, site=site, sid=sid,
                      data=data, status=Delivery.PENDING, attempts=0, next_attempt_at=at,
                      claimed_by=None, claimed_until=None, last_error=None, created_at=at,
                      finished_at=None)
    return True


def _targets(event: AccountEvent) -> dict[tuple[str, str, str], dict[str, Any] | None]:
    """(kind, site, sid) of each delivery of `event`, with the data of a webhook as the site
    may be told it. A family site hears of every account, all of it; a third-party client only
    of those that consented to it, and only what that consent allows (events.as_told)."""
    every = sites.all_sites()
    consents = {client_id: scope for client_id, scope in db.session.execute(
        select(ConsentGrant.client_id, ConsentGrant.scope)
        .where(ConsentGrant.user_id == event.user_id))}
    held: list[backchannel.ClientSession] = []
    if event.type == EventType.SESSIONS_ENDED:
        listed: Any = event.data.get("session_ids") or []
        held = backchannel.ended_client_sessions([str(session_id) for session_id in listed])
    found: dict[tuple[str, str, str], dict[str, Any] | None] = {}
    for site in every.values():
        if not site.webhook_url or not (site.first_party or site.name in consents):
            continue
        own = {ended.session_id for ended in held if ended.client_id == site.name}
        data = events.as_told(event.type, event.data,
                              None if site.first_party else consents[site.name], own)
        if data is not None:
            found[(Delivery.WEBHOOK, site.name, "")] = data
    for ended in held:
        client = every.get(ended.client_id)
        if client is not None and client.backchannel_logout_uri:
            found[(Delivery.BACKCHANNEL_LOGOUT, ended.client_id, ended.sid)] = None
    return found


# A delivery ----------------------------------------------------------------------------------

def body_of(event: AccountEvent, data: dict[str, Any]) -> str:
    """A webhook's body, the same on every attempt: Standard Webhooks' type, timestamp and
    data (as its site may be told it), with the event's id, `occurred_at` (the timestamp
    again, by its name here) and its place in the account's `sequence`."""
    at = event.occurred_at.isoformat().replace("+00:00", "Z")
    return json.dumps({"type": event.type, "id": event.id, "timestamp": at, "occurred_at": at,
                       "sequence": event.sequence, "data": {"user_id": event.user_id, **data}},
                      separators=(",", ":"), sort_keys=True)


def perform(job: Job) -> bool:
    """Send one delivery: True once the site answered 2xx, False when there is nothing to send
    any more (the event purged, the site or its endpoint gone); raising means "try again"."""
    delivery = db.session.get(Delivery, job.id)
    event = db.session.get(AccountEvent, delivery.event_id) if delivery else None
    site = sites.registered_site(delivery.site) if delivery else None
    if delivery is None or event is None or site is None:
        return False
    timeout = settings().webhook_timeout
    if delivery.kind == Delivery.WEBHOOK:
        endpoint = webhooks.endpoint_of(site)
        if endpoint is None:
            return False
        data = delivery.data if delivery.data is not None else \
            _targets(event).get((Delivery.WEBHOOK, site.name, ""))  # fanned out before 0040
        if data is None:
            return False
        body = body_of(event, data)
        headers = webhooks.signed_headers(endpoint, event.id, body, system_clock())
        db.session.rollback()  # no transaction stays open while the site answers
        post(check_endpoint(endpoint.url), data=body.encode(), headers=headers, timeout=timeout)
        return True
    if not site.backchannel_logout_uri:
        return False
    token = backchannel.logout_token(site.client_id, event.user_id, delivery.sid, delivery.id)
    db.session.rollback()
    post(check_endpoint(site.backchannel_logout_uri), data={"logout_token": token},
         headers={"cache-control": "no-store"}, timeout=timeout)
    return True


# What operators see and do (`flask events ...`) -----------------------------------------------

@dataclass(frozen=True)
class Listed:
    delivery: Delivery
    event_type: str | None


def recent(site: str | None = None, status: str | None = None, limit: int = 50) -> list[Listed]:
    """The latest deliveries, newest first (then by id, the other way round), with their event's
    type: read backwards from an index of (created_at, id), alone or after the site or the
    status, and stopped at `limit`."""
    query = (select(Delivery, AccountEvent.type)
             .join(AccountEvent, AccountEvent.id == Delivery.event_id, isouter=True)
             .order_by(Delivery.created_at.desc(), Delivery.id.desc()).limit(limit))
    if site is not None:
        query = query.where(Delivery.site == site)
    if status is not None:
        query = query.where(Delivery.status == status)
    return [Listed(delivery, kind) for delivery, kind in db.session.execute(query)]


def retry(*, failed: bool, site: str | None = None) -> int:
    """Deliveries waiting for a later attempt are due now (with `failed`, failed ones too, with
    a fresh set of attempts); how many are due now."""
    where: Any = True if site is None else Delivery.site == site
    return due_now(Delivery, failed=failed, where=where)
