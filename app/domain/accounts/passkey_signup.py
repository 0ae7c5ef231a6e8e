"""Passkey-first accounts: a sign-up with an address and no password. The address is proved by a
code mailed to it (email_codes.py, purpose "sign_up"; the mail holds the code alone, no link);
the account, made with that proof, is signed in and adds its passkey as any account does
(factors/passkeys.py). A taken address is refused as the password sign-up refuses it, at once;
no code is ever mailed to a taken address.
Why: docs/decisions.md, "Passkey-first accounts"."""

from __future__ import annotations

from dataclasses import asdict

from app.db.transactions import writes
from app.domain import addresses, audit
from app.domain.accounts import accounts, email_codes, emails
from app.domain.accounts.email_code_errors import InvalidEmailCode
from app.domain.accounts.errors import EmailTaken
from app.domain.audit import AuditName, ClientInfo
from app.domain.limits import throttle
from app.domain.mail.outbox import Job, keep_token, kept_token, schedule
from app.infra.mail import Message
from app.models import EmailCode, MailJob, User

PROVIDER = "email_code"  # the first factor of the sign-in that opens the new account
PURPOSE = EmailCode.SIGN_UP


def begin(untrusted_email: str, client: ClientInfo, language: str | None = None) -> str:
    """Promise the address a code (counted against its inbox, whoever asks): the canonical
    address. EmailTaken when an account has it, as the password sign-up answers."""
    email = addresses.canonical(untrusted_email)
    if accounts.address_taken(email):
        raise EmailTaken()
    _promise(email, client, language)
    return email


@writes
def _promise(email: str, client: ClientInfo, language: str | None) -> None:
    throttle.count_mail_to(email)
    schedule(MailJob.SIGNUP_CODE, {"email": email, "language": language,
                                   "client": asdict(client)})


def code_mail(job: Job) -> Message | None:
    """The mail job: a new code, unless the address has been taken since (then nothing). A
    retry mails the code the first attempt mailed."""
    email = job.payload["email"]
    if accounts.address_taken(email):
        return None
    link = kept_token(job)
    if link is None:
        link = email_codes.issue(email, PURPOSE).link
        keep_token(job, link)
    return emails.signup_code(email, email_codes.code_of(link),
                              int(email_codes.TTL.total_seconds()) // 60,
                              job.payload.get("language"))


def redeem(untrusted_email: str, untrusted_code: str) -> str:
    """The address, once its code is right; InvalidEmailCode (each try counted, in a unit of
    work of its own: email_codes.redeem). domain/sign_in.py's `sign_up_with_code` is the way in
    that uses it."""
    email = addresses.canonical(untrusted_email)
    if not email_codes.redeem(email, untrusted_code, PURPOSE):
        raise InvalidEmailCode()
    return email


def create(email: str, full_name: str, client: ClientInfo, language: str | None) -> User:
    """In the open unit of work: the account of a proved address, with no password (EmailTaken
    when an account took the address since)."""
    user = accounts.create_user(email, None, full_name, language=language)
    accounts.prove_address(user)
    audit.record(AuditName.SIGNED_UP, client, user_id=user.id)
    return user
