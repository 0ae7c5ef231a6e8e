"""When sign-in asks for a captcha: once an email, or an address, has failed recently. Emails are
counted whether or not an account has them, so the question reveals nothing.
Why: docs/architecture/design-notes.md, "Captcha"."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import delete

from app.db.transactions import writes
from app.domain.audit import ClientInfo
from app.domain.device_names import network_key
from app.domain.limits import captcha, throttle
from app.extensions import db
from app.infra.settings import settings
from app.models import FailureCounter

SCOPE = "captcha-login"


@dataclass(frozen=True)
class Subjects:
    email: str
    address: str


def _subjects(email_key: str, client: ClientInfo) -> Subjects:
    return Subjects(throttle.subject_key("email", email_key),
                    throttle.subject_key("address", network_key(client.ip)))


def needs_captcha(email_key: str | None, client: ClientInfo) -> bool:
    """Whether a sign-in for this email (None: any email, as the form before one is typed) from
    this client must carry a captcha token."""
    if captcha.configured() is None:
        return False
    limit, window = throttle.rule(settings().captcha_login_failures)
    subjects = _subjects(email_key or "", client)
    wanted = [subjects.address] + ([subjects.email] if email_key is not None else [])
    return any(throttle.recent_failures(SCOPE, subject, window) >= limit for subject in wanted)


@dataclass(frozen=True)
class Attempt:
    """A sign-in counted as a failure before its password is checked."""

    subjects: Subjects
    slot: throttle.Slot
    needs_captcha: bool


@writes
def attempt(email_key: str, client: ClientInfo) -> Attempt:
    """Before a sign-in's captcha and password are checked (the captcha mode not off), in a
    unit of work of its own: count it against its email and its address, and say whether it
    must carry a captcha token (either had CAPTCHA_LOGIN_FAILURES before it). Counted first, so
    that of concurrent attempts exactly that many go without one; `login_succeeded` or
    `not_a_failure` take it back."""
    limit, window = throttle.rule(settings().captcha_login_failures)
    subjects = _subjects(email_key, client)
    slot, failures = throttle.count_attempt(SCOPE, (subjects.email, subjects.address), window)
    return Attempt(subjects, slot, any(count > limit for count in failures.values()))


@writes
def not_a_failure(counted: Attempt) -> None:
    """The attempt ended before its password was checked (a captcha or a limit refused it)."""
    throttle.give_back(counted.slot)


@writes
def login_succeeded(counted: Attempt) -> None:
    """The right password: the email's count starts again (not its address's: one account's
    owner must not clear a stranger's failures), and the attempt is taken off the address's."""
    throttle.give_back(counted.slot)
    db.session.execute(delete(FailureCounter).where(
        FailureCounter.scope == SCOPE, FailureCounter.subject == counted.subjects.email))
