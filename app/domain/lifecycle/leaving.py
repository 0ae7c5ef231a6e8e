"""Leaving: at once every session ends and the account signs in no more (its address stays
taken); a mailed link restores it within the grace period (SVC_ACCOUNT_DELETION_GRACE_DAYS);
after that `flask purge` erases the person, leaving the account's id and its audit events
without personal data."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import timedelta

from sqlalchemy import String, cast, delete, or_, select, update

from app.db.transactions import writes
from app.domain import audit, events
from app.domain.accounts import emails, mailed_links
from app.domain.accounts.errors import InvalidConfirmationToken
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.errors import AuthError
from app.domain.events import EventType
from app.domain.mail.outbox import Job, schedule
from app.domain.sessions import sessions
from app.extensions import db
from app.infra.mail import Message
from app.infra.settings import settings
from app.models import (
    AuditEvent,
    AuthSession,
    HandoffCode,
    Identity,
    MailJob,
    OneTimeToken,
    Passkey,
    PendingSignIn,
    PushedRequest,
    RecoveryCode,
    RefreshToken,
    TotpFactor,
    User,
)

UNDO = OneTimeToken.UNDO_DELETION


class DeletionScheduled(AuthError):
    status = 409
    code = "deletion_scheduled"
    detail = "The account's owner is leaving: only the link mailed to them restores it."


def grace() -> timedelta:
    return timedelta(days=settings().account_deletion_grace_days)


@writes
def schedule_deletion(user: User, client: ClientInfo) -> None:
    """Close the account now, to be erased after the grace period. The caller has checked the
    owner's proof (lifecycle/proof.py), or is an operator."""
    if user.deletion_scheduled_at is not None:
        return
    at = now()
    user.deletion_scheduled_at = at
    user.disabled_at = user.disabled_at or at  # what stops sign-in and tokens everywhere
    sessions.revoke_all(user.id, "account_deleted")
    sessions.note_account_changed(user.id)
    audit.record(AuditName.DELETION_SCHEDULED, client, user_id=user.id,
                 changes=audit.changed(deletion_scheduled=(False, True)))
    events.emit(EventType.USER_DELETION_SCHEDULED, user.id,
                {"erase_after": erase_after(user)})
    schedule(MailJob.DELETION_SCHEDULED, {"user_id": user.id, "client": asdict(client)})


def erase_after(user: User) -> str | None:
    """When the account will be erased (ISO 8601), if its owner is leaving."""
    at = user.deletion_scheduled_at
    return (at + grace()).isoformat() if at else None


def restore_link_mail(job: Job) -> Message | None:
    user = db.session.get(User, job.payload["user_id"])
    if user is None or user.deletion_scheduled_at is None:
        return None
    raw = mailed_links.link_token(job, user, UNDO, grace())
    return emails.deletion_scheduled(user.email, raw, grace().days)


@writes
def restore(raw: str, client: ClientInfo) -> User:
    """The mailed link, within the grace period: the account is back as it was (sessions
    ended stay ended, and an operator's disable holds: it stays disabled, and no
    user.enabled goes out)."""
    row = mailed_links.live(raw, UNDO)
    user = db.session.get(User, row.user_id) if row else None
    if row is None or user is None or user.deletion_scheduled_at is None \
            or not mailed_links.claim(row):
        raise InvalidConfirmationToken()
    if not user.disabled_by_operator:
        user.disabled_at = None
    user.deletion_scheduled_at = None
    audit.record(AuditName.DELETION_CANCELLED, client, user_id=user.id,
                 changes=audit.changed(deletion_scheduled=(True, False)))
    if user.disabled_at is None:
        events.emit(EventType.USER_ENABLED, user.id)
    return user


def erase_due() -> int:
    """Erase every account whose grace period has passed and that is not erased yet (a step of
    `flask purge`; ix_users_erasure_due finds them), each in a unit of work of its own."""
    due = list(db.session.scalars(select(User.id).where(
        User.erased_at.is_(None), User.deletion_scheduled_at <= now() - grace())))
    for user_id in due:
        erase(user_id)
    return len(due)


@writes
def erase(user_id: str) -> None:
    """Remove the person: address, names, password, providers, factors, passkeys, sessions,
    pending links and mail; the audit trail keeps its events without address or device. The
    address is free for a new sign-up after this. Once: an erased account is left alone (its
    sites were told, its audit trail says so)."""
    user = db.session.get(User, user_id)
    if user is None or user.erased_at is not None:
        return
    email = user.email
    session_ids = select(AuthSession.id).where(AuthSession.user_id == user_id)
    db.session.execute(delete(RefreshToken).where(RefreshToken.session_id.in_(session_ids)))
    # Consents stay (a client id and a scope): they say which third-party clients are told of
    # the deletion, whose event goes out after this commits.
    for model in (AuthSession, Identity, TotpFactor, RecoveryCode, Passkey, PendingSignIn,
                  OneTimeToken, HandoffCode):
        db.session.execute(delete(model).where(model.user_id == user_id))
    # As JSON keeps them: a non-ASCII address is escaped there.
    needles = {email, json.dumps(email)[1:-1], user_id}
    payload = cast(MailJob.payload, String)
    db.session.execute(delete(MailJob).where(
        or_(*(payload.contains(n, autoescape=True) for n in needles))))
    db.session.execute(delete(PushedRequest).where(
        or_(*(PushedRequest.params.contains(n, autoescape=True) for n in needles))))
    db.session.execute(update(AuditEvent).where(AuditEvent.user_id == user_id)
                       .values(ip=None, user_agent=None, changes=None))
    # An erased operator's address leaves the trail of what they did; their id stays.
    db.session.execute(update(AuditEvent)
                       .where(AuditEvent.actor == f"{audit.OPERATOR}{user_id}")
                       .values(actor_email=None))
    events.forget_person(user_id)  # what a site needs to act on an event stays
    user.email = user.email_key = f"{user_id}@erased.invalid"
    user.full_name, user.password_hash, user.operator = "", None, False
    user.email_verified, user.email_verified_at = False, None
    user.password_changed_at = user.password_proved_at = None
    user.erased_at = now()
    audit.record(AuditName.ACCOUNT_ERASED, ClientInfo(actor="purge"), user_id=user_id)
    events.emit(EventType.USER_DELETED, user_id)
