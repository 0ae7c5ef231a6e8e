"""Changing an account's address: a link to the new address makes the change (nothing changes
before it is opened); the old address is then told, with a link that undoes it for seven days
and ends every session. A taken address gets the same answer as a free one: its holder is told
by mail instead, so the request tells nobody whether an account has it.

The undo link is the owner's way back after a stolen password or session, so whoever made the
change cannot defeat it: every undo link of the last seven days works and gives back its own
address (a later change kills none), the address it gives back is held for it (no one else
signs up with it or moves to it), and an undo kills the links of the changes made after it.
Why: docs/decisions.md, "Address changes and their undo"."""

from __future__ import annotations

from dataclasses import asdict
from datetime import timedelta

from sqlalchemy import delete
from sqlalchemy.exc import IntegrityError

from app.db.transactions import writes
from app.domain import addresses, audit, events
from app.domain.accounts import accounts, emails, identities, mailed_links
from app.domain.accounts.errors import EmailTaken, InvalidConfirmationToken
from app.domain.audit import AuditName, ClientInfo
from app.domain.errors import InvalidBody
from app.domain.events import EventType
from app.domain.factors import second_factors
from app.domain.limits import throttle
from app.domain.mail.outbox import Job, schedule
from app.domain.sessions import sessions
from app.extensions import db
from app.infra.mail import Message
from app.models import MailJob, OneTimeToken, User

CHANGE_TTL = timedelta(hours=24)
UNDO_TTL = timedelta(days=7)
CHANGE, UNDO = OneTimeToken.CHANGE_EMAIL, OneTimeToken.UNDO_EMAIL_CHANGE


def request_change(user: User, untrusted_new_email: str, client: ClientInfo) -> None:
    """Mail the new address a link (or, if an account has it, a notice): the same answer
    either way. The caller has checked the owner's proof (lifecycle/proof.py)."""
    new = addresses.canonical(untrusted_new_email, "#/new_email")
    if new == user.email:
        raise InvalidBody("That is already the account's address.",
                          [{"pointer": "#/new_email", "detail": "the current address"}])
    _schedule(user, new, client)


@writes
def _schedule(user: User, new: str, client: ClientInfo) -> None:
    throttle.count_mail_to(new)  # the address is not the account's yet: its own limit
    taken = accounts.address_taken(new, by_other_than=user)
    schedule(MailJob.EMAIL_CHANGE_REFUSED if taken else MailJob.EMAIL_CHANGE,
             {"user_id": user.id, "to": new, "from": user.email, "client": asdict(client)})
    audit.record(AuditName.EMAIL_CHANGE_REQUESTED, client, user_id=user.id)


def change_link_mail(job: Job) -> Message | None:
    """No link once the account has left the address the change was asked from (an undo since
    gave an older one back: the request was the mover's)."""
    user = db.session.get(User, job.payload["user_id"])
    if user is None or user.disabled_at is not None \
            or job.payload.get("from", user.email) != user.email:
        return None
    raw = mailed_links.link_token(job, user, CHANGE, CHANGE_TTL, to=job.payload["to"])
    return emails.email_change(job.payload["to"], raw, user.email)


def refused_mail(job: Job) -> Message:
    return emails.email_change_refused(job.payload["to"])


def changed_mail(job: Job) -> Message | None:
    """To the old address: the change, and the link that undoes it (made with the change,
    so the old address was held from the moment it was left)."""
    user = db.session.get(User, job.payload["user_id"])
    if user is None:
        return None
    raw = mailed_links.link_token(job, user, UNDO, UNDO_TTL, to=job.payload["old"],
                                  replaces=False)
    return emails.email_changed(job.payload["old"], job.payload["new"], raw)


def account_moving(raw: str) -> str | None:
    """The current address of the account a live change link would move (nothing used): the
    page says whose account it is before anyone presses its button, so a person sent a link
    for someone else's account does not hand it their address."""
    row = mailed_links.live(raw, CHANGE)
    user = db.session.get(User, row.user_id) if row else None
    return user.email if user is not None else None


@writes
def confirm_change(raw: str, client: ClientInfo) -> User:
    """Open the new address's link: the account takes the address (proved by the link)."""
    row = mailed_links.live(raw, CHANGE)
    user = db.session.get(User, row.user_id) if row else None
    if row is None or user is None or user.disabled_at is not None \
            or not mailed_links.claim(row):
        raise InvalidConfirmationToken()
    old = user.email
    _move(user, row.email, AuditName.EMAIL_CHANGED, client)
    undo = mailed_links.issue(user, UNDO, UNDO_TTL, old, client, replaces=False)
    schedule(MailJob.EMAIL_CHANGED, {"user_id": user.id, "old": old, "new": user.email,
                                     "client": asdict(client)}, token=undo)
    return user


@writes
def undo_change(raw: str, client: ClientInfo) -> User:
    """Open the old address's link: the address comes back, every session ends (whoever made
    the change is signed out) and the undo links of the changes made after this one die (they
    give back addresses the mover chose); older ones live on. The password goes too: a change
    asks for it (or a second factor's fresh code), so whoever made one most likely knew it. The
    owner sets a new one by a reset link to the address that came back."""
    row = mailed_links.live(raw, UNDO)
    user = db.session.get(User, row.user_id) if row else None
    if row is None or user is None or not mailed_links.claim(row):
        raise InvalidConfirmationToken()
    _move(user, row.email, AuditName.EMAIL_CHANGE_UNDONE, client)
    db.session.execute(delete(OneTimeToken).where(
        OneTimeToken.user_id == user.id, OneTimeToken.purpose == UNDO,
        OneTimeToken.created_at > row.created_at))
    # The ways in added since the change (a provider, a passkey, an authenticator app, new
    # recovery codes) were the mover's: a way back in for them, or a lock on the owner.
    identities.unlink_all(user.id, client, since=row.created_at)
    second_factors.remove_added_since(user, row.created_at)
    if user.password_hash is not None:
        accounts.set_password(user, None)
    sessions.revoke_all(user.id, "email_change_undone")
    return user


def _move(user: User, address: str, event: AuditName, client: ClientInfo) -> None:
    """The account takes `address`, proved by a link to it; links sent to its other addresses
    die (a reset link to the old one would otherwise still set the password), and so does the
    mark that its password is the address holder's: that was shown for the other address."""
    if accounts.address_taken(address, by_other_than=user):
        raise EmailTaken()
    try:
        with db.session.begin_nested():  # a concurrent change to the same address: one wins
            user.email = user.email_key = address
    except IntegrityError:
        raise EmailTaken() from None
    accounts.prove_address(user)
    user.password_proved_at = None
    db.session.execute(delete(OneTimeToken).where(
        OneTimeToken.user_id == user.id,
        OneTimeToken.purpose.in_((OneTimeToken.RESET_PASSWORD, OneTimeToken.CONFIRM_EMAIL,
                                  CHANGE))))
    db.session.flush()
    audit.record(event, client, user_id=user.id)
    sessions.note_account_changed(user.id)
    events.emit(EventType.USER_UPDATED, user.id, {"changed": ["email", "email_verified"],
                                                   "email": address, "email_verified": True})
