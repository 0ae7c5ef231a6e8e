"""Links sent by mail (reset, confirmation, address change, undo): a token of 256 random bits,
stored hashed, bound to one purpose, one account and the address it went to; used once; replaced
by a newer one of its purpose; the same in every copy of a mail a retry sends again."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, func, select

from app.db.rows import claim_once
from app.db.transactions import writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.mail.outbox import Job, keep_token, kept_token
from app.domain.tokens import tokens
from app.extensions import db
from app.models import OneTimeToken, User


def link_token(job: Job, user: User, purpose: str, ttl: timedelta, to: str | None = None,
               *, replaces: bool = True) -> str:
    """The token of the link `job` mails. A retry (its worker died after the mail server took
    the first copy) mails the one it kept, so both copies hold the same link: working if it
    still does, dead if it was used or replaced since (a newer request, a password change), as
    the first copy's is. A new token only for a first attempt, or once the kept one expired
    unused: nothing newer exists then (it would have deleted the kept one), so it kills none."""
    raw = kept_token(job)
    if raw is not None:
        row = db.session.get(OneTimeToken, tokens.hash_secret(raw))
        if row is None or row.used_at is not None or row.expires_at > now():
            return raw
    return _issue(user, purpose, ttl, ClientInfo(**job.payload["client"]), job, to or user.email,
                  replaces)


@writes
def _issue(user: User, purpose: str, ttl: timedelta, client: ClientInfo, job: Job,
           to: str, replaces: bool) -> str:
    """A new token for `purpose`, mailed by `job` to `to`; any older one of the same purpose
    stops working (unless not `replaces`)."""
    raw = issue(user, purpose, ttl, to, client, replaces=replaces)
    keep_token(job, raw)
    return raw


def issue(user: User, purpose: str, ttl: timedelta, to: str, client: ClientInfo, *,
          replaces: bool = True) -> str:
    """A new token for `purpose` to `to`, in the caller's unit of work, for a mail the caller
    schedules with it (mail.outbox.schedule's `token`). `replaces`: older ones of the purpose
    stop working; an address change's undo links do not, each restores its own address."""
    at = now()
    if replaces:
        db.session.execute(delete(OneTimeToken).where(OneTimeToken.user_id == user.id,
                                                      OneTimeToken.purpose == purpose))
    else:  # kept in the order they were made, even by a clock that stood still
        latest = db.session.scalar(select(func.max(OneTimeToken.created_at)).where(
            OneTimeToken.user_id == user.id, OneTimeToken.purpose == purpose))
        at = max(at, latest + timedelta(microseconds=1)) if latest is not None else at
    raw = tokens.new_secret()
    db.session.add(OneTimeToken(token_hash=tokens.hash_secret(raw), user_id=user.id,
                                purpose=purpose, email=to, created_at=at,
                                expires_at=at + ttl))
    audit.record(AuditName.link_sent(purpose), client, user_id=user.id)
    return raw


def holder_of(address: str) -> str | None:
    """The account a live undo link would give `address` back to, if any: a moved-from
    address is held for it, so no one else takes it (domain/lifecycle/address_change.py)."""
    return db.session.scalars(select(OneTimeToken.user_id).where(
        OneTimeToken.purpose == OneTimeToken.UNDO_EMAIL_CHANGE, OneTimeToken.email == address,
        OneTimeToken.used_at.is_(None), OneTimeToken.expires_at > now()).limit(1)).first()


def live(raw: str, purpose: str) -> OneTimeToken | None:
    row = db.session.get(OneTimeToken, tokens.hash_secret(raw))
    if row is None or row.purpose != purpose or row.used_at is not None or row.expires_at <= now():
        return None
    return row


def claim(row: OneTimeToken) -> bool:
    """Mark a token used, in the caller's unit of work: of two concurrent uses, one wins."""
    return claim_once(OneTimeToken, OneTimeToken.token_hash == row.token_hash,
                      OneTimeToken.used_at, used_at=now())
