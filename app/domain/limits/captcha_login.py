"""When sign-in asks for a captcha: once an email, or an address, has failed recently.

A person who types their password right is never asked. After SVC_CAPTCHA_LOGIN_FAILURES
("3 per 15 minutes") failed sign-ins for one email (from anywhere) or from one address (its
IPv6 /64, for any email), the next attempts must carry a captcha token until the window ends.
Emails are counted by their key whether or not an account has them, so the question appears
after the same number of failures for a known and an unknown address, and reveals nothing.

The counts are failure_counters rows of their own scope (keyed hashes, as domain/limits/throttle.py
keeps them), counted only while the captcha mode is not off. A sign-in that succeeds clears its
email's count (not its address's: one account's owner must not clear a stranger's failures).
The throttles of app/domain/limits/throttle.py apply as before, captcha or not.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete

from app.db.transactions import writes
from app.domain.audit import ClientInfo
from app.domain.limits import captcha, throttle
from app.extensions import db
from app.models import FailureCounter

SCOPE = "captcha-login"


@dataclass(frozen=True)
class Subjects:
    email: str
    address: str


def _subjects(email_key: str, client: ClientInfo) -> Subjects:
    return Subjects(throttle.subject_key("email", email_key),
                    throttle.subject_key("address", throttle.network_key(client.ip)))


def needs_captcha(email_key: str | None, client: ClientInfo) -> bool:
    """Whether a sign-in for this email (None: any email, as the form before one is typed) from
    this client must carry a captcha token."""
    if captcha.configured() is None:
        return False
    limit, window = throttle.rule("CAPTCHA_LOGIN_FAILURES")
    subjects = _subjects(email_key or "", client)
    wanted = [subjects.address] + ([subjects.email] if email_key is not None else [])
    return any(throttle.recent_failures(SCOPE, subject, window) >= limit for subject in wanted)


@writes
def login_failed(email_key: str, client: ClientInfo) -> None:
    """Count a failed sign-in against its email and its address, in a unit of work of its own."""
    if captcha.configured() is None:
        return
    _, window = throttle.rule("CAPTCHA_LOGIN_FAILURES")
    subjects = _subjects(email_key, client)
    for subject in (subjects.email, subjects.address):
        throttle.count_failure(SCOPE, subject, window)


def login_succeeded(email_key: str, client: ClientInfo) -> None:
    """The right password: the email's count starts again (a write only if it had one)."""
    if captcha.configured() is None:
        return
    _, window = throttle.rule("CAPTCHA_LOGIN_FAILURES")
    subject = _subjects(email_key, client).email
    if throttle.recent_failures(SCOPE, subject, window):
        _forget(subject)


@writes
def _forget(subject: str) -> None:
    db.session.execute(delete(FailureCounter).where(FailureCounter.scope == SCOPE,
                                                    FailureCounter.subject == subject))

