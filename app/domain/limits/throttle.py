"""The limits that protect accounts, counted in the database (failure_counters) so that every worker
and instance shares them. Each attempt is counted before its guess is checked, so of concurrent
attempts exactly the limit are checked, and refusals come before any password hashing.
Why: docs/architecture/design-notes.md, "Throttles and lockout"."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from limits import parse
from sqlalchemy import case, delete, literal, or_, select, tuple_, update
from sqlalchemy.dialects import postgresql, sqlite

from app.db.batches import delete_batched
from app.db.transactions import writes
from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.device_names import network_key
from app.domain.errors import RateLimited
from app.domain.limits import known_devices
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.settings import settings
from app.models import AuthSession, FailureCounter, RateLimitCounter, User
from app.models.types import UTCDateTime

LOGIN, PASSWORD_CHANGE, SECOND_FACTOR = "login", "password-change", "second-factor"
NEW_DEVICE_MAIL = "new-device-mail"  # not a failure: mails sent, counted the same way
MAIL_TO = "mail-to"  # mails to an address not yet the account's, per recipient
ANYWHERE = "*"


@dataclass(frozen=True)
class Device:
    """What a sign-in attempt shows of the device it comes from."""

    untrusted_cookie: str | None = None  # the hosted pages' known-device cookie, unchecked
    # The API has no cookie: there an address (its /64) with a session of the account is known.
    address_counts: bool = True


API_DEVICE = Device()


def browser_device(untrusted_cookie: str | None) -> Device:
    """A browser on the hosted pages: only its cookie can show it signed in before."""
    return Device(untrusted_cookie, address_counts=False)


@dataclass(frozen=True)
class _Count:
    """A counter as an attempt counted on it left it."""

    failures: int  # in the window, this attempt included
    window_start: datetime
    last_failure_at: datetime  # of the attempt counted before this one


@dataclass(frozen=True)
class Slot:
    """An attempt counted before its guess was checked: what giving it back needs."""

    scope: str
    counted: tuple[tuple[str, str, datetime], ...]  # subject, source, and its window's start


@dataclass(frozen=True)
class LoginAttempt:
    """A sign-in attempt the limits let through, counted as a failure until it succeeds."""

    subject: str
    source: str
    slot: Slot


def _enabled() -> bool:
    return settings().ratelimit_enabled


def _rule(limit: str) -> tuple[int, timedelta]:
    """A flask-limiter style limit ("100 per day"), one of the settings, as (amount, window)."""
    return _parsed(limit)


@lru_cache(maxsize=16)
def _parsed(rule: str) -> tuple[int, timedelta]:
    item = parse(rule)
    return item.amount, timedelta(seconds=item.get_expiry())


def _key(kind: str, value: str) -> str:
    """A counter key: a keyed hash, so the table holds no email or address in clear."""
    secret = settings().secret_key
    return tokens.keyed_digest(secret, "failure-counter", f"{kind}\0{value}").hex()


def _seconds(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds()))


# Counting ----------------------------------------------------------------------------------------

def _reserve(scope: str, keys: tuple[tuple[str, str], ...], window: timedelta,
             at: datetime) -> dict[tuple[str, str], _Count]:
    """Count one more attempt on each counter (subject, source) before its guess is checked, and
    return the counters with it: compared with a limit, they tell whether this attempt may go
    on. One INSERT ... ON CONFLICT DO UPDATE ... RETURNING adds atomically on SQLite and
    PostgreSQL alike, so that of concurrent attempts each sees a count of its own (reading first
    and adding after the guess let a burst through whole). On PostgreSQL the rows stay locked,
    and on SQLite the unit of work holds the write lock, until the caller's transaction ends.
    A refusal raised in that unit rolls its count back: refused attempts count for nothing."""
    table = FailureCounter.__table__
    insert: Any = postgresql.insert if _dialect() == "postgresql" else sqlite.insert
    expired = FailureCounter.window_start <= at - window
    # last_failure_at is left as it was, so that RETURNING gives the previous attempt's time;
    # the UPDATE below then sets this one's.
    statement = insert(table).values([
        {"scope": scope, "subject": subject, "source": source, "failures": 1,
         "window_start": at, "last_failure_at": at} for subject, source in keys
    ]).on_conflict_do_update(
        index_elements=[table.c.scope, table.c.subject, table.c.source],
        set_={"failures": case((expired, 1), else_=FailureCounter.failures + 1),
              "window_start": case((expired, literal(at, UTCDateTime())),
                                   else_=FailureCounter.window_start)},
    ).returning(table.c.subject, table.c.source, table.c.failures, table.c.window_start,
                table.c.last_failure_at)
    counts = {(row.subject, row.source): _Count(row.failures, row.window_start,
                                                row.last_failure_at)
              for row in db.session.execute(statement)}
    db.session.execute(update(FailureCounter).where(
        FailureCounter.scope == scope,
        tuple_(FailureCounter.subject, FailureCounter.source).in_(keys),
    ).values(last_failure_at=at).execution_options(synchronize_session=False))
    return counts


def _slot(scope: str, counts: dict[tuple[str, str], _Count]) -> Slot:
    return Slot(scope, tuple((subject, source, count.window_start)
                             for (subject, source), count in counts.items()))


def _give_back(slot: Slot) -> None:
    """The attempt proved no failure: take it off each of its counters, unless that counter's
    window has started again since."""
    for subject, source, window_start in slot.counted:
        db.session.execute(update(FailureCounter).where(
            FailureCounter.scope == slot.scope, FailureCounter.subject == subject,
            FailureCounter.source == source, FailureCounter.window_start == window_start,
            FailureCounter.failures > 0,
        ).values(failures=FailureCounter.failures - 1)
            .execution_options(synchronize_session=False))


def _dialect() -> str:
    return db.session.get_bind().dialect.name


def _counts(scope: str, subject: str, source: str, window: timedelta,
            at: datetime) -> dict[str, _Count]:
    """The live counts of `subject` from `source` and from anywhere, without counting."""
    rows = db.session.execute(
        select(FailureCounter.source, FailureCounter.failures, FailureCounter.window_start,
               FailureCounter.last_failure_at).where(
            FailureCounter.scope == scope, FailureCounter.subject == subject,
            or_(FailureCounter.source == source, FailureCounter.source == ANYWHERE)))
    return {row.source: _Count(row.failures, row.window_start, row.last_failure_at)
            for row in rows if row.window_start + window > at}


def _delay(failures: int) -> timedelta:
    config = settings()
    over = failures - config.login_delay_after
    if over < 0:
        return timedelta(0)
    return timedelta(seconds=min(2 ** min(over, 30), config.login_delay_max))


def _address_signed_in_before(user_id: str, ip: str | None) -> bool:
    wanted = network_key(ip)
    known = db.session.scalars(select(AuthSession.ip).distinct().where(
        AuthSession.user_id == user_id, AuthSession.ip.is_not(None)))
    return bool(wanted) and any(network_key(found) == wanted for found in known)


# Sign-in -----------------------------------------------------------------------------------------

@writes
def login_attempt(email_key: str, user: User | None, client: ClientInfo,
                  device: Device) -> LoginAttempt | None:
    """Before the password is hashed, in a unit of work of its own: count this attempt as a
    failure for its email and source and for its email from anywhere (`login_succeeded` takes
    it back), or raise RateLimited, counting nothing, when this email may not be tried now
    from where it comes. `user` is the account of the email, if there is one."""
    if not _enabled():
        return None
    user_id = user.id if user is not None else ""
    device_id = known_devices.device_of(device.untrusted_cookie, user_id) if user else None
    subject = _key("email", email_key)
    source = _key("device", device_id) if device_id else _key("address", network_key(client.ip))
    limit, window = _rule(settings().limit_login_failures)
    at = now()
    counts = _reserve(LOGIN, ((subject, source), (subject, ANYWHERE)), window, at)
    pair, email = counts[subject, source], counts[subject, ANYWHERE]
    # The pair waits after its earlier failures (this attempt is the pair's failures-th). No
    # delay is no wait, even when a concurrent attempt's clock was a little ahead of this one's.
    delay = _delay(pair.failures - 1)
    if delay and pair.last_failure_at + delay > at:
        raise RateLimited(_seconds(pair.last_failure_at + delay - at))
    if email.failures > limit and device_id is None and not (
            # (Asked for an unknown email too, so that both answer in the same time.)
            device.address_counts and _address_signed_in_before(user_id, client.ip)):
        raise RateLimited(_seconds(email.window_start + window - at))
    return LoginAttempt(subject, source, _slot(LOGIN, counts))


@writes
def login_succeeded(attempt: LoginAttempt | None) -> None:
    """The right password: this email and source start again from nothing, and the attempt is
    taken off the email's failures from anywhere."""
    if attempt is None:
        return
    _give_back(attempt.slot)
    db.session.execute(delete(FailureCounter).where(
        FailureCounter.scope == LOGIN, FailureCounter.subject == attempt.subject,
        FailureCounter.source == attempt.source))


@writes
def password_change_attempt(user: User) -> Slot | None:
    """Before the current password is hashed, in a unit of work of its own: count this attempt
    as a wrong current password (`password_change_succeeded` takes it back), or raise
    RateLimited, counting nothing, after too many."""
    if not _enabled():
        return None
    limit, window = _rule(settings().limit_password_change_failures)
    at = now()
    counts = _reserve(PASSWORD_CHANGE, ((_key("account", user.id), ANYWHERE),), window, at)
    [account] = counts.values()
    if account.failures > limit:
        raise RateLimited(_seconds(account.window_start + window - at))
    return _slot(PASSWORD_CHANGE, counts)


@writes
def password_change_succeeded(slot: Slot | None) -> None:
    if slot is not None:
        _give_back(slot)


@dataclass(frozen=True)
class SecondFactorAttempt:
    slot: Slot
    pending_attempts: int  # of the pending sign-in, this one included (0 without one)


def second_factor_attempt(user_id: str, pending_key: str | None) -> SecondFactorAttempt:
    """Before a second factor's code is checked, in the caller's unit of work: count this
    attempt as a wrong code against the account (and its pending sign-in, if any), or raise
    RateLimited after LIMIT_SECOND_FACTOR_FAILURES on the account. Always on, whatever
    RATELIMIT_ENABLED says: a six-digit code is found by guessing when guesses are free.
    `second_factor_succeeded` takes a right code off the account's failures."""
    limit, window = _rule(settings().limit_second_factor_failures)
    subject = _key("account", user_id)
    pending = (subject, _key("pending", pending_key)) if pending_key else None
    at = now()
    counts = _reserve(SECOND_FACTOR, ((subject, ANYWHERE),) + ((pending,) if pending else ()),
                      window, at)
    account = counts[subject, ANYWHERE]
    if account.failures > limit:
        raise RateLimited(_seconds(account.window_start + window - at))
    return SecondFactorAttempt(_slot(SECOND_FACTOR, counts),
                               counts[pending].failures if pending else 0)


def second_factor_succeeded(attempt: SecondFactorAttempt) -> None:
    """In the caller's unit of work."""
    _give_back(attempt.slot)


def clear_account(user: User) -> None:
    """Forget every failure counted against the account (its address was just proved), in the
    caller's write transaction."""
    for scope, subject in ((LOGIN, _key("email", user.email_key)),
                           (PASSWORD_CHANGE, _key("account", user.id))):
        db.session.execute(delete(FailureCounter).where(FailureCounter.scope == scope,
                                                        FailureCounter.subject == subject))


# For counters of other scopes (limits/captcha_login.py) -----------------------------

def subject_key(kind: str, value: str) -> str:
    return _key(kind, value)


def rule(limit: str) -> tuple[int, timedelta]:
    return _rule(limit)


def recent_failures(scope: str, subject: str, window: timedelta) -> int:
    """The failures counted against `subject` from anywhere in its live window."""
    count = _counts(scope, subject, ANYWHERE, window, now()).get(ANYWHERE)
    return count.failures if count is not None else 0


def count_attempt(scope: str, subjects: tuple[str, ...],
                  window: timedelta) -> tuple[Slot, dict[str, int]]:
    """Count one attempt against each subject from anywhere, before its guess is checked, in the
    caller's write transaction: the slot (for `give_back`) and each subject's failures, this
    attempt included."""
    counts = _reserve(scope, tuple((subject, ANYWHERE) for subject in subjects), window, now())
    return _slot(scope, counts), {subject: count.failures
                                  for (subject, _), count in counts.items()}


def count_new_device_mail(user_id: str, limit: int, window: timedelta) -> bool:
    """Count one more mail telling the account of a new device, in the caller's unit of work:
    whether it is within `limit` mails in `window` (domain/new_devices.py)."""
    counts = _reserve(NEW_DEVICE_MAIL, ((_key("user", user_id), ANYWHERE),), window, now())
    return all(count.failures <= limit for count in counts.values())


def count_mail_to(address: str) -> None:
    """Count one more mail to `address`, an address that is not the account's own yet (an
    address change's), in the caller's unit of work: past LIMIT_FORGOT (as many as
    forgot-password mails one address) RateLimited, which rolls the count back with the unit,
    so only mails sent count. Per recipient, whoever asks: no one's inbox is bombarded."""
    if not _enabled():
        return
    limit, window = _rule(settings().limit_forgot)
    at = now()
    counts = _reserve(MAIL_TO, ((_key("email", address), ANYWHERE),), window, at)
    for count in counts.values():
        if count.failures > limit:
            raise RateLimited(_seconds(count.window_start + window - at))


def give_back(slot: Slot) -> None:
    """The attempt of `slot` was no failure, in the caller's write transaction."""
    _give_back(slot)


def purge_stale() -> int:
    """Delete counters whose window ended over a day ago, and rate-limit counters whose window
    has ended (cron, with sessions purge-expired)."""
    config = settings()
    _, longest = max(_rule(config.limit_login_failures),
                     _rule(config.limit_password_change_failures),
                     _rule(config.limit_second_factor_failures), _rule(config.limit_forgot),
                     key=lambda rule: rule[1])
    failures = delete_batched(
        (FailureCounter.scope, FailureCounter.subject, FailureCounter.source),
        FailureCounter.window_start < now() - longest - timedelta(days=1))
    return failures + delete_batched(RateLimitCounter.key, RateLimitCounter.expires_at <= now())
