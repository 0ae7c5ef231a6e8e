"""The limits that protect accounts, counted in the database (table failure_counters).

Every worker and every instance shares the counts, and a restart or a recycled worker forgets
nothing. Failures are rare, so each costs one write; a sign-in costs one indexed read.

- Per email and source (the client's address, IPv6 cut to its /64, or a known device): after
  LOGIN_DELAY_AFTER failures, each further one makes that pair wait twice as long as the last
  (1 s, 2 s, 4 s... up to LOGIN_DELAY_MAX seconds). A successful sign-in clears the pair.
- Per email, from anywhere: after LIMIT_LOGIN_FAILURES, attempts are refused, except from a device
  that signed in to the account before (domain/limits/known_devices.py for the hosted pages; for the
  API, an address with a session of the account), whose failures still count.
- Per account, password changes: LIMIT_PASSWORD_CHANGE_FAILURES wrong current passwords.

Refusals come before any password hashing, as RateLimited with the seconds to wait. Emails are
counted by their key whether or not an account has them: an unknown address gets the same
answers as a known one. A password reset or an email confirmation clears the account's counters.
Everything here is off with RATELIMIT_ENABLED=false, like the other limits.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from flask import current_app
from limits import parse
from sqlalchemy import bindparam, case, delete, literal, or_, select
from sqlalchemy.dialects import postgresql, sqlite

from app.db.rows import changed
from app.db.transactions import writes
from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.errors import RateLimited
from app.domain.limits import known_devices
from app.domain.tokens import tokens
from app.extensions import db
from app.models import AuthSession, FailureCounter, RateLimitCounter, User
from app.models.types import UTCDateTime

LOGIN, PASSWORD_CHANGE, SECOND_FACTOR = "login", "password-change", "second-factor"
ANYWHERE = "*"
IPV6_PREFIX = 64  # one customer's network: a host picks any address in it


def network_key(ip: str | None) -> str:
    """The part of an address that limits count by: an IPv6 address's /64 (an IPv4-mapped one
    as IPv4), an IPv4 address as it is. Anything else is returned unchanged."""
    try:
        address = ipaddress.ip_address((ip or "").split("%", 1)[0])
    except ValueError:
        return ip or ""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(address), IPV6_PREFIX), strict=False))
    return str(address)


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
class LoginAttempt:
    """An attempt the limits let through, to count if it fails (None: limits are off)."""

    subject: str
    source: str
    source_failed_before: bool


@dataclass(frozen=True)
class _Count:
    failures: int
    window_start: datetime
    last_failure_at: datetime


def _enabled() -> bool:
    return bool(current_app.config["RATELIMIT_ENABLED"])


def _rule(setting: str) -> tuple[int, timedelta]:
    """A flask-limiter style setting ("100 per day") as (amount, window)."""
    return _parsed(str(current_app.config[setting]))


@lru_cache(maxsize=16)
def _parsed(rule: str) -> tuple[int, timedelta]:
    item = parse(rule)
    return item.amount, timedelta(seconds=item.get_expiry())


def _key(kind: str, value: str) -> str:
    """A counter key: a keyed hash, so the table holds no email or address in clear."""
    secret = str(current_app.config["SECRET_KEY"])
    return tokens.keyed_digest(secret, "failure-counter", f"{kind}\0{value}").hex()


def _seconds(delta: timedelta) -> int:
    return max(1, math.ceil(delta.total_seconds()))


# Built once: on the sign-in path, building the statement cost more than running it.
_COUNTS = select(FailureCounter.source, FailureCounter.failures, FailureCounter.window_start,
                 FailureCounter.last_failure_at).where(
    FailureCounter.scope == bindparam("scope"), FailureCounter.subject == bindparam("subject"),
    or_(FailureCounter.source == bindparam("source"), FailureCounter.source == ANYWHERE))


def _counts(scope: str, subject: str, source: str, window: timedelta,
            at: datetime) -> dict[str, _Count]:
    """The live counts of `subject` from `source` and from anywhere: one read by primary key."""
    # On the session's connection, in its transaction, without the ORM's layers.
    rows = db.session.connection().execute(_COUNTS, {"scope": scope, "subject": subject,
                                                     "source": source})
    return {row.source: _Count(row.failures, row.window_start, row.last_failure_at)
            for row in rows if row.window_start + window > at}


def _delay(failures: int) -> timedelta:
    config = current_app.config
    over = failures - int(config["LOGIN_DELAY_AFTER"])
    if over < 0:
        return timedelta(0)
    return timedelta(seconds=min(2 ** min(over, 30), int(config["LOGIN_DELAY_MAX"])))


def _address_signed_in_before(user_id: str, ip: str | None) -> bool:
    wanted = network_key(ip)
    known = db.session.scalars(select(AuthSession.ip).distinct().where(
        AuthSession.user_id == user_id, AuthSession.ip.is_not(None)))
    return bool(wanted) and any(network_key(found) == wanted for found in known)


def check_login(email_key: str, user: User | None, client: ClientInfo,
                device: Device) -> LoginAttempt | None:
    """Before the password is hashed: RateLimited when this email may not be tried now from
    where this attempt comes; otherwise the attempt, to pass to `login_failed` or
    `login_succeeded`. `user` is the account of the email, if there is one."""
    if not _enabled():
        return None
    user_id = user.id if user is not None else ""
    device_id = known_devices.device_of(device.untrusted_cookie, user_id) if user else None
    subject = _key("email", email_key)
    source = _key("device", device_id) if device_id else _key("address", network_key(client.ip))
    limit, window = _rule("LIMIT_LOGIN_FAILURES")
    at = now()
    counts = _counts(LOGIN, subject, source, window, at)
    pair = counts.get(source)
    if pair is not None and pair.last_failure_at + _delay(pair.failures) > at:
        raise RateLimited(_seconds(pair.last_failure_at + _delay(pair.failures) - at))
    email = counts.get(ANYWHERE)
    if email is not None and email.failures >= limit and device_id is None and not (
            # (Asked for an unknown email too, so that both answer in the same time.)
            device.address_counts and _address_signed_in_before(user_id, client.ip)):
        raise RateLimited(_seconds(email.window_start + window - at))
    return LoginAttempt(subject, source, source_failed_before=pair is not None)


def login_failed(attempt: LoginAttempt | None) -> None:
    """Count a failed sign-in, for its email and source and for its email from anywhere, in
    the caller's write transaction."""
    if attempt is not None:
        _, window = _rule("LIMIT_LOGIN_FAILURES")
        _count(LOGIN, attempt.subject, (attempt.source, ANYWHERE), window)


def login_succeeded(attempt: LoginAttempt | None) -> None:
    """The right password: this email and source start again from nothing (a write only when
    they had failed before; otherwise nothing at all)."""
    if attempt is not None and attempt.source_failed_before:
        _forget_source(attempt)


@writes
def _forget_source(attempt: LoginAttempt) -> None:
    db.session.execute(delete(FailureCounter).where(
        FailureCounter.scope == LOGIN, FailureCounter.subject == attempt.subject,
        FailureCounter.source == attempt.source))


def check_password_change(user: User) -> None:
    """Before the current password is hashed: RateLimited after too many wrong ones."""
    if not _enabled():
        return
    limit, window = _rule("LIMIT_PASSWORD_CHANGE_FAILURES")
    at = now()
    count = _counts(PASSWORD_CHANGE, _key("account", user.id), ANYWHERE, window,
                    at).get(ANYWHERE)
    if count is not None and count.failures >= limit:
        raise RateLimited(_seconds(count.window_start + window - at))


def password_change_failed(user: User) -> None:
    """Count a wrong current password, in the caller's write transaction."""
    if _enabled():
        _, window = _rule("LIMIT_PASSWORD_CHANGE_FAILURES")
        _count(PASSWORD_CHANGE, _key("account", user.id), (ANYWHERE,), window)


def check_second_factor(user_id: str, pending_key: str | None) -> None:
    """Before a second factor's code is checked: RateLimited after LIMIT_SECOND_FACTOR_FAILURES
    wrong codes on this account. Always on, whatever RATELIMIT_ENABLED says: a six-digit code
    is found by guessing when guesses are free."""
    limit, window = _rule("LIMIT_SECOND_FACTOR_FAILURES")
    at = now()
    count = _counts(SECOND_FACTOR, _key("account", user_id), ANYWHERE, window,
                    at).get(ANYWHERE)
    if count is not None and count.failures >= limit:
        raise RateLimited(_seconds(count.window_start + window - at))


def second_factor_failed(user_id: str, pending_key: str | None) -> int:
    """Count a wrong code against the account (and its pending sign-in, if any), in the
    caller's write transaction: the pending sign-in's count of failures so far."""
    _, window = _rule("LIMIT_SECOND_FACTOR_FAILURES")
    subject = _key("account", user_id)
    source = _key("pending", pending_key) if pending_key else None
    _count(SECOND_FACTOR, subject, (ANYWHERE,) + ((source,) if source else ()), window)
    if source is None:
        return 0
    found = _counts(SECOND_FACTOR, subject, source, window, now()).get(source)
    return found.failures if found else 0


def clear_account(user: User) -> None:
    """Forget every failure counted against the account (its address was just proved), in the
    caller's write transaction."""
    for scope, subject in ((LOGIN, _key("email", user.email_key)),
                           (PASSWORD_CHANGE, _key("account", user.id))):
        db.session.execute(delete(FailureCounter).where(FailureCounter.scope == scope,
                                                        FailureCounter.subject == subject))


def _count(scope: str, subject: str, sources: tuple[str, ...], window: timedelta) -> None:
    """Add one failure to each counter, atomically (INSERT ... ON CONFLICT DO UPDATE, on SQLite
    and PostgreSQL alike): concurrent failures are all counted. A counter whose window has
    passed starts again at one."""
    at = now()
    table = FailureCounter.__table__
    dialect = db.session.get_bind().dialect.name
    insert: Any = postgresql.insert if dialect == "postgresql" else sqlite.insert
    expired = FailureCounter.window_start <= at - window
    statement = insert(table).values([
        {"scope": scope, "subject": subject, "source": source, "failures": 1,
         "window_start": at, "last_failure_at": at} for source in sources
    ]).on_conflict_do_update(
        index_elements=[table.c.scope, table.c.subject, table.c.source],
        set_={"failures": case((expired, 1), else_=FailureCounter.failures + 1),
              "window_start": case((expired, literal(at, UTCDateTime())),
                                      else_=FailureCounter.window_start),
              "last_failure_at": at},
    )
    db.session.execute(statement)


# For counters of other scopes (domain/limits/captcha_login.py) -----------------------------------

def subject_key(kind: str, value: str) -> str:
    return _key(kind, value)


def rule(setting: str) -> tuple[int, timedelta]:
    return _rule(setting)


def recent_failures(scope: str, subject: str, window: timedelta) -> int:
    """The failures counted against `subject` from anywhere in its live window."""
    count = _counts(scope, subject, ANYWHERE, window, now()).get(ANYWHERE)
    return count.failures if count is not None else 0


def count_failure(scope: str, subject: str, window: timedelta) -> None:
    """Count one failure against `subject` from anywhere, in the caller's write transaction."""
    _count(scope, subject, (ANYWHERE,), window)


@writes
def purge_stale() -> int:
    """Delete counters whose window ended over a day ago, and rate-limit counters counted in the
    database while Redis failed whose window has ended (cron, with sessions purge-expired)."""
    _, longest = max(_rule("LIMIT_LOGIN_FAILURES"), _rule("LIMIT_PASSWORD_CHANGE_FAILURES"),
                     _rule("LIMIT_SECOND_FACTOR_FAILURES"), key=lambda rule: rule[1])
    deleted = changed(delete(FailureCounter).where(
        FailureCounter.window_start < now() - longest - timedelta(days=1)))
    deleted = (deleted or 0) + changed(delete(RateLimitCounter).where(
        RateLimitCounter.expires_at <= now()))
    return int(deleted or 0)
