"""Forgotten passwords and email confirmation, through one-time tokens sent by email. Requests
answer alike for every address; the mail job looks the account up and makes the token later.
Why: docs/architecture/design-notes.md, "Password reset and email confirmation"."""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta
from typing import Any

from app.db.transactions import writes
from app.domain import audit, events
from app.domain.accounts import accounts, emails, identities, mailed_links
from app.domain.accounts.errors import InvalidConfirmationToken, InvalidResetToken
from app.domain.audit import AuditName, ClientInfo
from app.domain.events import EventType
from app.domain.factors import passkeys, second_factors
from app.domain.limits import throttle
from app.domain.mail.outbox import Job, schedule
from app.domain.services import services
from app.domain.sessions import sessions
from app.extensions import db
from app.infra.mail import Message
from app.infra.settings import settings
from app.models import MailJob, OneTimeToken, User

RESET = OneTimeToken.RESET_PASSWORD
CONFIRM = OneTimeToken.CONFIRM_EMAIL
CONFIRM_TTL = timedelta(days=3)
INVITATION_TTL = timedelta(days=7)


def _reset_ttl() -> timedelta:
    return timedelta(seconds=settings().reset_token_ttl)


# Forgotten password --------------------------------------------------------------------------

def request_reset(untrusted_email: str, client: ClientInfo, site: str | None = None) -> None:
    """Promise a reset mail for whatever address: the same work and answer for every one.
    `site`, a client site's registered name, goes into the link (the hosted pages' way back to
    it); nothing else of the request travels through mail."""
    _schedule_for_address(MailJob.RESET_PASSWORD, untrusted_email, client, site=site)


def reset_link_mail(job: Job) -> Message | None:
    """The reset job: a link for an existing, enabled account, nothing for any other address."""
    user = accounts.find_by_email(job.payload["email"])
    if user is None or user.disabled_at is not None:
        return None
    raw = mailed_links.link_token(job, user, RESET, _reset_ttl())
    minutes = int(_reset_ttl().total_seconds()) // 60
    return emails.reset_password(user.email, raw, minutes, job.payload.get("site"))


def invite(user: User, client: ClientInfo) -> None:
    """Mail an account opened without a password a link to choose one, in the caller's unit of
    work. The link is a reset link that lives longer."""
    schedule(MailJob.INVITATION, {"user_id": user.id, "client": asdict(client)})


def invitation_mail(job: Job) -> Message | None:
    """The invitation job: nothing once the account has a password or is disabled."""
    user = db.session.get(User, job.payload["user_id"])
    if user is None or user.disabled_at is not None or user.password_hash is not None:
        return None
    raw = mailed_links.link_token(job, user, RESET, INVITATION_TTL)
    return emails.invitation(user.email, raw, INVITATION_TTL.days)


@writes
def _schedule_for_address(kind: str, untrusted_email: str, client: ClientInfo,
                          **fields: Any) -> None:
    schedule(kind, {"email": untrusted_email, "client": asdict(client), **fields})


def reset_token_is_live(raw: str) -> bool:
    return mailed_links.live(raw, RESET) is not None


def reset_password(raw: str, new_password: str, client: ClientInfo) -> None:
    """Set a new password with a reset token: every session ends, every provider linked before
    is unlinked (the link proved the address, so whoever linked them may not be its owner), and
    the owner is told."""
    row = mailed_links.live(raw, RESET)
    user = db.session.get(User, row.user_id) if row else None
    if row is None or user is None or user.disabled_at is not None or (
            user.password_changed_at and row.created_at < user.password_changed_at):
        raise InvalidResetToken()
    accounts.check_password_policy(new_password, user.email, pointer="#/new_password")
    new_hash = services().hasher.hash(new_password)  # outside the write transaction
    _apply_reset(row, user, new_hash, client)


@writes
def _apply_reset(row: OneTimeToken, user: User, new_hash: str, client: ClientInfo) -> None:
    if not mailed_links.claim(row):
        raise InvalidResetToken()
    if not user.email_verified:
        # Factors set while nobody had proved the address are whoever signed up with it: they
        # go, like the providers below. (Enrolling needs a proved address; this is the backstop.)
        second_factors.remove_unproved(user)
    to_the_address = row.email == user.email
    if to_the_address:
        accounts.prove_address(user)  # the reset link proved this inbox is theirs...
    # ...and then its holder chose the password.
    accounts.set_password(user, new_hash, by_address_holder=to_the_address)
    unlinked = identities.unlink_all(user.id, client)
    passkeys.stop_alone(user)  # a way in too, which stays a second factor
    sessions.revoke_all(user.id, "password_reset")
    throttle.clear_account(user)  # whoever was failing on this account, the owner is back in
    audit.record(AuditName.PASSWORD_RESET, client, user_id=user.id)
    schedule(MailJob.PASSWORD_CHANGED, {"to": user.email, "unlinked": unlinked})


# Email confirmation --------------------------------------------------------------------------

def request_confirmation(untrusted_email: str, client: ClientInfo, *,
                         proving_password: bool = False) -> None:
    """Resend: the same work and answer for every address; only unconfirmed accounts get mail,
    and (`proving_password`, asked from the account page) confirmed ones whose password is not
    yet shown to be the address holder's."""
    _schedule_for_address(MailJob.CONFIRM_EMAIL, untrusted_email, client,
                          **({"proving_password": True} if proving_password else {}))


def confirmation_mail(job: Job) -> Message | None:
    """The confirmation job: a link for an enabled account whose address is not confirmed (or
    whose password is to be proved)."""
    payload = job.payload
    user = (db.session.get(User, payload["user_id"]) if "user_id" in payload
            else accounts.find_by_email(payload["email"]))
    if user is None or user.disabled_at is not None:
        return None
    if user.email_verified and not (payload.get("proving_password")
                                    and not user.password_is_the_holders):
        return None
    raw = mailed_links.link_token(job, user, CONFIRM, CONFIRM_TTL)
    return emails.confirm_email(user.email, raw)


def confirmation_is_live(raw: str) -> bool:
    """Whether a confirmation link would confirm its account's address now (nothing used)."""
    row = mailed_links.live(raw, CONFIRM)
    user = db.session.get(User, row.user_id) if row else None
    return user is not None and row is not None and row.email == user.email


@writes
def confirm_email(raw: str, client: ClientInfo, signed_in_as: str | None = None) -> User:
    """Confirm the address with a mailed link. Opened in a browser signed in to the account
    (`signed_in_as`, its id), it also shows that the account's password is the holder's: the
    one who signed up holds the inbox (factors/second_factors.py asks that of a new factor)."""
    row = mailed_links.live(raw, CONFIRM)
    user = db.session.get(User, row.user_id) if row else None
    if row is None or user is None or row.email != user.email or not mailed_links.claim(row):
        raise InvalidConfirmationToken()
    accounts.prove_address(user, by_password_holder=signed_in_as == user.id)
    throttle.clear_account(user)
    audit.record(AuditName.EMAIL_CONFIRMED, client, user_id=user.id)
    events.emit(EventType.USER_UPDATED, user.id,
                {"changed": ["email_verified"], "email_verified": True})
    return user

