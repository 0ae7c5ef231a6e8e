"""Second factors: an authenticator app (TOTP, RFC 6238) and recovery codes; the pending
sign-in that waits for one; the operator's reset. Passkeys are second factors too
(domain/factors/passkeys.py): this module counts them, and completes a pending sign-in with one.

A sign-in of an account with a second factor opens nothing when its first factor (a password, a
provider) is authenticated: `gated` turns its opening into a *pending sign-in* (a short-lived,
single-use, single-purpose token, stored as its hash), and `complete` runs the opening only
once a code of the second factor was verified, in one unit of work.

Enrolling ends every other session of the account (`confirm_totp`, `passkeys.register`), so no
session opened before the factor existed outlives it: every live session of an account with a
second factor has proved it (single sign-on of a browser session included).

Wrong codes are counted per account and per pending sign-in (domain/limits/throttle.py), whatever
RATELIMIT_ENABLED says: a six-digit code must never be open to unlimited guessing. Each attempt
is counted before its code is checked, in the unit of work that checks it, and a right code
taken back: of concurrent guesses, exactly the limit are checked.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Generic, TypeVar

import pyotp
from flask import current_app
from sqlalchemy import delete, func, select, update

from app.db.rows import claim_once
from app.db.transactions import kept, writes
from app.domain import audit
from app.domain.accounts import addresses
from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.errors import (
    AlreadyEnrolled,
    FactorNeedsConfirmedEmail,
    FactorNeedsProvedPassword,
    InvalidMfaToken,
    InvalidSecondFactor,
    NotEnrolled,
    NotFound,
    StepUpRequired,
)
from app.domain.limits import throttle
from app.domain.mail.outbox import schedule
from app.domain.sessions import sessions
from app.domain.tokens import tokens
from app.extensions import db
from app.models import (
    AuthSession,
    MailJob,
    Passkey,
    PendingSignIn,
    RecoveryCode,
    TotpFactor,
    User,
)

T = TypeVar("T")
STEP = 30  # seconds: the RFC's and every app's default
WINDOW = 1  # steps either side of now that a code may come from (clock drift, slow typing)
RECOVERY_CODES = 10
TOTP, RECOVERY_CODE, PASSKEY = "totp", "recovery_code", "passkey"


# Reading ---------------------------------------------------------------------------------------

def _totp_of(user_id: str) -> TotpFactor | None:
    return db.session.get(TotpFactor, user_id)


def has_totp(user: User) -> bool:
    factor = _totp_of(user.id)
    return factor is not None and factor.confirmed_at is not None


def has_passkey(user: User) -> bool:
    return db.session.scalar(select(Passkey.id).where(Passkey.user_id == user.id).limit(1)) \
        is not None


def has_second_factor(user: User) -> bool:
    return has_totp(user) or has_passkey(user)


def methods(user: User, purpose: str = PendingSignIn.HOSTED) -> list[str]:
    """The second factors a pending sign-in of this account may complete with, for `purpose`:
    a passkey only on the hosted pages, whose origin is the one passkeys are made for."""
    found = [TOTP] if has_totp(user) else []
    if recovery_codes_left(user):
        found.append(RECOVERY_CODE)
    if purpose == PendingSignIn.HOSTED and has_passkey(user):
        found.append(PASSKEY)
    return found


def recovery_codes_left(user: User) -> int:
    return int(db.session.scalar(select(func.count()).select_from(RecoveryCode).where(
        RecoveryCode.user_id == user.id, RecoveryCode.used_at.is_(None))) or 0)


@dataclass(frozen=True)
class Summary:
    """What the account page shows."""

    totp: bool
    passkeys: bool
    recovery_codes_left: int

    @property
    def any(self) -> bool:
        return self.totp or self.passkeys


def summary(user: User) -> Summary:
    return Summary(has_totp(user), has_passkey(user), recovery_codes_left(user))


# Step-up ---------------------------------------------------------------------------------------

def recently_signed_in(session: AuthSession) -> bool:
    return now() - session.created_at <= timedelta(
        seconds=int(current_app.config["STEP_UP_SECONDS"]))


def step_up(user: User, session: AuthSession, code: str | None) -> None:
    """Before a change to how the account signs in, in the caller's unit of work: the session
    must have signed in within STEP_UP_SECONDS, or `code` be a fresh code of the account's
    second factor (used up, like any). StepUpRequired otherwise; InvalidSecondFactor (kept:
    counted against the account) for a wrong code."""
    if recently_signed_in(session):
        return
    if not code or not has_second_factor(user):
        raise StepUpRequired()
    attempt = throttle.second_factor_attempt(user.id, None)
    if _use_code(user, code) is None:
        audit.record("second_factor_failed", ClientInfo(), user_id=user.id,
                     session_id=session.id)
        raise kept(InvalidSecondFactor())
    throttle.second_factor_succeeded(attempt)


# Enrolling -------------------------------------------------------------------------------------

def require_may_enrol(user: User) -> None:
    """A second factor belongs to the address's holder, and outlives a reset: none before
    someone proved the address (FactorNeedsConfirmedEmail), and none while the password may be
    someone else's, set before that proof by whoever signed up (FactorNeedsProvedPassword)."""
    if not user.email_verified:
        raise FactorNeedsConfirmedEmail()
    if not user.password_is_the_holders:
        raise FactorNeedsProvedPassword()


@writes
def start_totp(user: User, session: AuthSession) -> str:
    """Begin (or begin again) enrolling an authenticator app: a new secret, which counts only
    once a code confirms it. AlreadyEnrolled when the account has one; StepUpRequired unless
    the session signed in recently; `require_may_enrol`'s refusals."""
    require_may_enrol(user)
    factor = _totp_of(user.id)
    if factor is not None and factor.confirmed_at is not None:
        raise AlreadyEnrolled()
    step_up(user, session, None)
    secret = pyotp.random_base32()  # 160 bits, as RFC 4226 recommends
    if factor is None:
        db.session.add(TotpFactor(user_id=user.id, secret=secret, created_at=now()))
    else:
        factor.secret, factor.created_at = secret, now()
    return secret


def pending_secret(user: User) -> str | None:
    """The secret of an enrolment in progress, to show again (the QR code and the key)."""
    factor = _totp_of(user.id)
    return factor.secret if factor is not None and factor.confirmed_at is None else None


def provisioning_uri(user: User, secret: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=user.email,
                                               issuer_name=current_app.config["BRAND"])


@writes
def confirm_totp(user: User, code: str, client: ClientInfo, session: AuthSession) -> list[str]:
    """Confirm an enrolment with a code from the app: the factor counts from now, every other
    session than `session` ends, the owner is told by mail; the recovery codes (a new set),
    shown once (none when the account had a passkey already, and with it a set).
    InvalidSecondFactor for a wrong code (counted against the account)."""
    factor = _totp_of(user.id)
    if factor is None or factor.confirmed_at is not None:
        raise NotEnrolled()
    step_up(user, session, None)
    attempt = throttle.second_factor_attempt(user.id, None)
    step = _matching_step(factor, code)
    if step is None:
        raise kept(InvalidSecondFactor())
    throttle.second_factor_succeeded(attempt)
    first_factor = not has_passkey(user)
    factor.confirmed_at, factor.last_used_step = now(), step
    codes = new_recovery_codes(user) if first_factor else []
    sessions.revoke_all(user.id, "second_factor_added", except_session=session.id)
    audit.record("second_factor_added", client, user_id=user.id, session_id=session.id)
    tell_owner(user, MailJob.SECOND_FACTOR_ADDED, "authenticator app")
    return codes


@writes
def remove_totp(user: User, client: ClientInfo, session: AuthSession, code: str | None) -> None:
    """Remove the authenticator app, and the recovery codes unless a passkey still protects the
    account (step-up)."""
    if not has_totp(user):
        raise NotEnrolled()
    step_up(user, session, code)
    db.session.execute(delete(TotpFactor).where(TotpFactor.user_id == user.id))
    drop_recovery_codes_if_unprotected(user)
    audit.record("second_factor_removed", client, user_id=user.id, session_id=session.id)
    tell_owner(user, MailJob.SECOND_FACTOR_REMOVED, "authenticator app")


@writes
def regenerate_recovery_codes(user: User, client: ClientInfo, session: AuthSession,
                              code: str | None) -> list[str]:
    """A new set of recovery codes; the old set stops working (step-up)."""
    if not has_second_factor(user):
        raise NotEnrolled()
    step_up(user, session, code)
    codes = new_recovery_codes(user)
    audit.record("recovery_codes_regenerated", client, user_id=user.id, session_id=session.id)
    return codes


@writes
def reset(untrusted_email: str) -> User:
    """The operator's `users reset-mfa`: every second factor of the account goes (audited, and
    the owner is told)."""
    user = db.session.scalars(
        select(User).where(User.email_key == addresses.key(untrusted_email))).one_or_none()
    if user is None:
        raise NotFound(f"No account for {untrusted_email}.")
    _remove_all(user)
    audit.record("second_factors_reset", ClientInfo(), user_id=user.id)
    tell_owner(user, MailJob.SECOND_FACTOR_REMOVED, "every second factor")
    return user


def remove_unproved(user: User) -> None:
    """Remove the factors of an account whose address nobody had proved, in the caller's unit
    of work (a reset: domain/accounts/recovery.py)."""
    _remove_all(user)


def _remove_all(user: User) -> None:
    db.session.execute(delete(TotpFactor).where(TotpFactor.user_id == user.id))
    db.session.execute(delete(Passkey).where(Passkey.user_id == user.id))
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))


def drop_recovery_codes_if_unprotected(user: User) -> None:
    """Recovery codes stand in for a second factor: they go with the account's last one."""
    if not has_second_factor(user):
        db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))


def tell_owner(user: User, kind: str, factor: str) -> None:
    schedule(kind, {"to": user.email, "factor": factor})


# Codes -----------------------------------------------------------------------------------------

def _step(at: datetime) -> int:
    return int(at.timestamp()) // STEP


def _matching_step(factor: TotpFactor, code: str) -> int | None:
    """The time step, within the window and after the last one used, whose code `code` is."""
    code = "".join(code.split())
    if not (len(code) == 6 and code.isascii() and code.isdigit()):
        return None
    totp, current = pyotp.TOTP(factor.secret), _step(now())
    for step in range(current - WINDOW, current + WINDOW + 1):
        if (factor.last_used_step is None or step > factor.last_used_step) and \
                hmac.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def _use_totp(user: User, code: str) -> bool:
    factor = _totp_of(user.id)
    if factor is None or factor.confirmed_at is None:
        return False
    step = _matching_step(factor, code)
    if step is None:
        return False
    # Claimed atomically: of two requests with the same code, one wins.
    claimed = db.session.execute(
        update(TotpFactor).where(TotpFactor.user_id == user.id,
                                 (TotpFactor.last_used_step.is_(None))
                                 | (TotpFactor.last_used_step < step))
        .values(last_used_step=step).execution_options(synchronize_session=False)).rowcount
    return claimed == 1


def _code_hash(user_id: str, code: str) -> str:
    normal = "".join(code.lower().split()).replace("-", "")
    return hashlib.sha256(f"{user_id}\0{normal}".encode("utf-8", "surrogatepass")).hexdigest()


def new_recovery_codes(user: User) -> list[str]:
    """A new set of recovery codes, in the caller's unit of work: the old set stops working."""
    db.session.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user.id))
    alphabet = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(alphabet) for _ in range(10))  # ~49 bits each
        codes.append(f"{raw[:5]}-{raw[5:]}")
    at = now()
    db.session.add_all(RecoveryCode(user_id=user.id, code_hash=_code_hash(user.id, code),
                                    created_at=at) for code in codes)
    db.session.flush()
    return codes


def _use_recovery_code(user: User, code: str) -> bool:
    used = db.session.execute(
        update(RecoveryCode).where(RecoveryCode.user_id == user.id,
                                   RecoveryCode.code_hash == _code_hash(user.id, code),
                                   RecoveryCode.used_at.is_(None))
        .values(used_at=now()).execution_options(synchronize_session=False)).rowcount
    return used == 1


def _use_code(user: User, code: str) -> str | None:
    """The method a code proved (and used up), or None."""
    digits = "".join(code.split())
    if digits.isascii() and digits.isdigit():
        return TOTP if _use_totp(user, digits) else None
    return RECOVERY_CODE if _use_recovery_code(user, code) else None


# Signing in ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SecondFactorRequired:
    """What a sign-in of an account with a second factor opens instead of a session."""

    token: str
    methods: list[str]
    expires_in: int


def _pending_ttl() -> int:
    return int(current_app.config["MFA_PENDING_TTL"])


def gated(opening: sessions.Opening[T], purpose: str) -> sessions.Opening[T | SecondFactorRequired]:
    """`opening`, for an account without a second factor; a pending sign-in (for `purpose`)
    for one with."""
    def open_or_wait(user: User, provider: str) -> T | SecondFactorRequired:
        if not has_second_factor(user):
            return opening(user, provider)
        return begin(user, provider, purpose)
    return open_or_wait


@writes
def begin(user: User, provider: str, purpose: str) -> SecondFactorRequired:
    """A pending sign-in of `user`, whose first factor (`provider`) was just authenticated."""
    sessions.require_confirmed(user)
    raw, at = tokens.new_secret(), now()
    db.session.add(PendingSignIn(token_hash=tokens.hash_secret(raw), user_id=user.id,
                                 purpose=purpose, provider=provider, created_at=at,
                                 expires_at=at + timedelta(seconds=_pending_ttl())))
    return SecondFactorRequired(raw, methods(user, purpose), _pending_ttl())


def live_pending(raw: str, purpose: str) -> PendingSignIn:
    pending = db.session.get(PendingSignIn, tokens.hash_secret(raw)) if raw else None
    if pending is None or pending.purpose != purpose or pending.used_at is not None \
            or pending.expires_at <= now():
        raise InvalidMfaToken()
    return pending


def pending_user(raw: str, purpose: str) -> User:
    """The account a live pending sign-in is for (to name it on the second step's page)."""
    return db.session.get_one(User, live_pending(raw, purpose).user_id)


@dataclass(frozen=True)
class Completed(Generic[T]):
    opened: T
    provider: str  # the first factor
    method: str  # the second: TOTP, RECOVERY_CODE or a passkey (passkeys.DEVICE_BOUND, SYNCED)


@writes
def complete(raw: str, purpose: str, code: str, client: ClientInfo,
             opening: sessions.Opening[T]) -> Completed[T]:
    """Complete a pending sign-in with a code of its account's second factor: what `opening`
    opens, and how. InvalidMfaToken for a token that is unknown, used,
    expired or of another purpose; InvalidSecondFactor for a wrong code (counted, and the
    pending sign-in ends after MFA_PENDING_ATTEMPTS of them); RateLimited after too many."""
    return complete_with(raw, purpose, client, opening, code_proof(code))


def code_proof(code: str) -> Callable[[User, PendingSignIn], str | None]:
    """A proof for `complete_with`: a code of the account's authenticator app, or a recovery
    code (used up)."""
    return lambda user, _pending: _use_code(user, code)


@writes
def complete_with(raw: str, purpose: str, client: ClientInfo, opening: sessions.Opening[T],
                  prove: Callable[[User, PendingSignIn], str | None]) -> Completed[T]:
    """`complete`, with the proof `prove` checks (and uses up): the method it proved, or None."""
    pending = live_pending(raw, purpose)
    user = db.session.get_one(User, pending.user_id)
    attempt = throttle.second_factor_attempt(user.id, pending.token_hash)
    attempts = int(current_app.config["MFA_PENDING_ATTEMPTS"])
    if attempt.pending_attempts > attempts:
        raise InvalidMfaToken()  # spent by the wrong codes of concurrent attempts
    method = prove(user, pending) if user.disabled_at is None else None
    if method is None:
        if attempt.pending_attempts == attempts:
            pending.used_at = now()  # this pending sign-in is spent: start again
        audit.record("second_factor_failed", client, user_id=user.id)
        raise kept(InvalidSecondFactor())
    throttle.second_factor_succeeded(attempt)
    # Claimed atomically: of two requests completing one pending sign-in, one wins.
    if not claim_once(PendingSignIn, PendingSignIn.token_hash == pending.token_hash,
                      PendingSignIn.used_at, used_at=now()):
        raise InvalidMfaToken()
    audit.record("second_factor_verified", client, user_id=user.id)
    with sessions.second_factor_proved(method):
        opened = opening(user, pending.provider)
    return Completed(opened, pending.provider, method)


@writes
def purge_expired() -> int:
    return int(db.session.execute(delete(PendingSignIn).where(
        PendingSignIn.expires_at < now() - timedelta(days=1))).rowcount or 0)
