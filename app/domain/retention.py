"""What the service keeps, and for how long: the steps of `flask --app wsgi purge`.

Each step deletes one kind of row past its retention and says how many it deleted. A new kind of
row that grows without end is one more `Step` in `STEPS`. Every step deletes in batches
(app/db/batches.py), each its own write transaction, so that on SQLite sign-ins queue behind
a batch rather than behind a year of audit events, and selects its rows by an index.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from app.db.batches import delete_batched
from app.domain.admin import idempotency
from app.domain.clock import now
from app.domain.factors import passkeys, pending
from app.domain.lifecycle import leaving
from app.domain.limits import throttle
from app.domain.mail import outbox_ops
from app.domain.sessions import sessions
from app.infra.settings import settings
from app.models import (
    AccountEvent,
    AuditEvent,
    Delivery,
    EmailCode,
    HandoffCode,
    IdempotentAnswer,
    OneTimeToken,
    PushedRequest,
)


@dataclass(frozen=True)
class Step:
    """One kind of row to purge: `run()` deletes what is past its retention, and returns how
    many rows it deleted; `what` names them in the command's output."""

    what: str
    run: Callable[[], int]


def _spent_before() -> Any:
    """Handoff codes and emailed tokens are kept this long after they expire (used or not):
    the audit trail's "handoff_code_replayed" needs the code a while after its use."""
    return now() - timedelta(hours=settings().code_retention_hours)


def purge_handoff_codes() -> int:
    return delete_batched(HandoffCode.code_hash, HandoffCode.expires_at < _spent_before())


def purge_pushed_requests() -> int:
    """At once when they expire: nothing asks about a pushed request after that, and anyone may
    push one as a public client."""
    return delete_batched(PushedRequest.handle_hash, PushedRequest.expires_at < now())


def purge_one_time_tokens() -> int:
    return delete_batched(OneTimeToken.token_hash, OneTimeToken.expires_at < _spent_before())


def purge_email_codes() -> int:
    """At once when they expire: a dead code answers as one that never was."""
    return delete_batched((EmailCode.email_key, EmailCode.purpose), EmailCode.expires_at < now())


def purge_audit_events() -> int:
    """Events older than SVC_AUDIT_RETENTION_DAYS; 0 keeps every event."""
    days = settings().audit_retention_days
    if days == 0:
        return 0
    return delete_batched(AuditEvent.id, AuditEvent.at < now() - timedelta(days=days))


def purge_idempotent_answers() -> int:
    return delete_batched((IdempotentAnswer.client_id, IdempotentAnswer.key),
                          IdempotentAnswer.created_at <= now() - idempotency.KEEP_FOR)


def purge_deliveries() -> int:
    """Deliveries of events sent (or skipped) past SVC_MAIL_RETENTION_DAYS; failed ones stay,
    for `events retry --failed`."""
    return outbox_ops.purge(timedelta(days=settings().mail_retention_days),
                            jobs=Delivery)


def purge_account_events() -> int:
    """Events dispatched past SVC_MAIL_RETENTION_DAYS whose deliveries are all gone (a failed
    one keeps its event: a retry builds its body from it)."""
    cutoff = now() - timedelta(days=settings().mail_retention_days)
    undelivered = select(Delivery.id).where(Delivery.event_id == AccountEvent.id)
    return delete_batched(AccountEvent.id, AccountEvent.dispatched_at.is_not(None)
                          & (AccountEvent.dispatched_at < cutoff) & ~undelivered.exists())


def purge_mail_jobs() -> int:
    """Sent mail jobs (failed ones stay, for `outbox retry --failed`)."""
    return outbox_ops.purge(timedelta(days=settings().mail_retention_days))


STEPS: list[Step] = [
    Step("accounts erased after their deletion's grace period", leaving.erase_due),
    Step("ended sessions", sessions.purge_expired),
    Step("failure and rate-limit counters of windows long past", throttle.purge_stale),
    Step("expired handoff codes", purge_handoff_codes),
    Step("expired pushed authorization requests", purge_pushed_requests),
    Step("expired reset and confirmation tokens", purge_one_time_tokens),
    Step("expired email sign-in codes", purge_email_codes),
    Step("pending sign-ins long expired", pending.purge_expired),
    Step("passkey challenges long expired", passkeys.purge_expired),
    Step("admin API answers kept for Idempotency-Key retries", purge_idempotent_answers),
    Step("mail jobs finished past SVC_MAIL_RETENTION_DAYS", purge_mail_jobs),
    Step("deliveries of events finished past SVC_MAIL_RETENTION_DAYS", purge_deliveries),
    Step("account events delivered past SVC_MAIL_RETENTION_DAYS", purge_account_events),
    Step("audit events past their retention", purge_audit_events),
]
