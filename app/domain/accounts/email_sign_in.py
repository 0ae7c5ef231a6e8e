"""Signing in with a code mailed to the account's address: a way in (domain/sign_in.py) beside
the password. Asking answers alike for every address: the request only promises a mail job,
which looks the account up when it runs and mails a code and a link to an enabled account,
nothing to any other address. The code and link are email_codes.py's (single use, ten minutes,
five tries per code). A code proves the address, so it confirms an unconfirmed one; a password
set on it before then may be a stranger's who signed up with the address first, and is removed.
Why: docs/decisions.md, "Email sign-in codes"."""

from __future__ import annotations

from dataclasses import asdict

from app.db.transactions import writes
from app.domain import addresses, audit, events
from app.domain.accounts import accounts, email_codes, emails
from app.domain.accounts.email_code_errors import EmailCodeOff, InvalidEmailCode
from app.domain.audit import AuditName, ClientInfo
from app.domain.clients.sites import Site
from app.domain.events import EventType
from app.domain.mail.outbox import Job, keep_token, kept_token, schedule
from app.domain.sessions import sessions
from app.infra.mail import Message
from app.infra.settings import settings
from app.models import MailJob, User

PROVIDER = "email_code"  # the sessions' provider; amr "otp" (domain/sessions/sessions.py)
PURPOSE = email_codes.SIGN_IN


def check_enabled(site: Site | None = None) -> None:
    """EmailCodeOff when the service (SVC_EMAIL_CODE_SIGN_IN) or the site turned it off."""
    if not enabled(site):
        raise EmailCodeOff()


def enabled(site: Site | None = None) -> bool:
    return settings().email_code_sign_in and (
        site is None or site.email_code_sign_in)


@writes
def request_code(untrusted_email: str, client: ClientInfo, *, browser: str | None = None,
                 site: Site | None = None) -> None:
    """Promise a code for whatever well-formed address: the same work and answer for every one.
    `browser`: a value only the asking browser holds, which the link is bound to."""
    check_enabled(site)
    schedule(MailJob.EMAIL_CODE, {"email": untrusted_email, "client": asdict(client),
                                  "browser": email_codes.browser_binding(browser),
                                  "site": site.name if site else None})


def code_mail(job: Job) -> Message | None:
    """The job: a code and link to an existing, enabled account, nothing to any other address.
    A retry mails the pair the first attempt mailed, as it stands (used or replaced since: dead)."""
    user = accounts.find_by_email(job.payload["email"])
    if user is None or user.disabled_at is not None or not enabled():
        return None
    link = kept_token(job)
    if link is None:
        link = _issue(job, user)
    minutes = int(email_codes.TTL.total_seconds()) // 60
    return emails.email_code(user.email, email_codes.code_of(link), link, minutes)


@writes
def _issue(job: Job, user: User) -> str:
    issued = email_codes.issue(user.email, PURPOSE, bound_to=job.payload.get("browser"))
    keep_token(job, issued.link)
    audit.record(AuditName.EMAIL_CODE_SENT, ClientInfo(**job.payload["client"]), user_id=user.id)
    return issued.link


def authenticate(untrusted_email: str, untrusted_code: str, client: ClientInfo) -> User:
    """The account whose live code this is, the code used up; InvalidEmailCode otherwise. Call it
    outside a unit of work: each try is counted in one of its own (email_codes.redeem)."""
    email = addresses.canonical(untrusted_email)
    if not email_codes.redeem(email, untrusted_code, PURPOSE):
        _failed(accounts.find_by_email(email), client)
        raise InvalidEmailCode()
    return _proved(addresses.key(email), client)


def authenticate_link(link: str, browser: str | None, client: ClientInfo) -> User:
    """The account of a live link opened in the browser that asked, the link used up."""
    email_key = email_codes.redeem_link(link, PURPOSE, browser)
    if email_key is None:
        raise InvalidEmailCode()
    return _proved(email_key, client)


@writes
def _proved(email_key: str, client: ClientInfo) -> User:
    user = accounts.find_by_email(email_key)
    if user is None or user.disabled_at is not None:
        raise InvalidEmailCode()
    if not user.email_verified:  # the code went to the address: it is the holder's now
        if user.password_hash is not None:
            _remove_squatters_password(user, client)
        accounts.prove_address(user)
        events.emit(EventType.USER_UPDATED, user.id,
                    {"changed": ["email_verified"], "email_verified": True})
    return user


def _remove_squatters_password(user: User, client: ClientInfo) -> None:
    """The first proof of the address finds a password: whoever set it never proved the inbox,
    and may be someone who signed up with another person's address to wait for them. What a
    reset does: the password goes and every session ends (the sign-in makes its own after);
    the holder can add a password from the account page (lifecycle/first_password.py)."""
    accounts.set_password(user, None)
    sessions.revoke_all(user.id, "unproved_password_removed")
    audit.record(AuditName.UNPROVED_PASSWORD_REMOVED, client, user_id=user.id)
    schedule(MailJob.PASSWORD_REMOVED, {"to": user.email})


@writes
def _failed(user: User | None, client: ClientInfo) -> None:
    audit.record(AuditName.EMAIL_CODE_FAILED, client, user_id=user.id if user else None)


def look(link: str, browser: str | None) -> email_codes.Looked | None:
    return email_codes.look(link, PURPOSE, browser)

