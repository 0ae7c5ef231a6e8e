"""From the account page: adding and removing an authenticator app (TOTP, RFC 6238), and a new
set of recovery codes. Enrolling ends every other session of the account, so no session opened
before the factor existed outlives it (passkeys do the same: factors/passkeys.py)."""

from __future__ import annotations

import pyotp
from sqlalchemy import delete

from app.db.transactions import kept, writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.factors import codes, second_factors
from app.domain.factors.errors import AlreadyEnrolled, InvalidSecondFactor, NotEnrolled
from app.domain.factors.step_up import step_up
from app.domain.limits import throttle
from app.domain.sessions import sessions
from app.extensions import db
from app.infra.settings import settings
from app.models import AuthSession, MailJob, TotpFactor, User


@writes
def start_totp(user: User, session: AuthSession) -> str:
    """Begin (or begin again) enrolling an authenticator app: a new secret, which counts only
    once a code confirms it. AlreadyEnrolled when the account has one; StepUpRequired unless
    the session signed in recently; `require_may_enrol`'s refusals."""
    second_factors.require_may_enrol(user)
    factor = codes.totp_of(user.id)
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
    factor = codes.totp_of(user.id)
    return factor.secret if factor is not None and factor.confirmed_at is None else None


def provisioning_uri(user: User, secret: str) -> str:
    return pyotp.TOTP(secret).provisioning_uri(name=user.email,
                                               issuer_name=settings().brand)


@writes
def confirm_totp(user: User, code: str, client: ClientInfo, session: AuthSession) -> list[str]:
    """Confirm an enrolment with a code from the app: the factor counts from now, every other
    session than `session` ends, the owner is told by mail; the recovery codes (a new set),
    shown once (none when the account had a passkey already, and with it a set).
    InvalidSecondFactor for a wrong code (counted against the account)."""
    factor = codes.totp_of(user.id)
    if factor is None or factor.confirmed_at is not None:
        raise NotEnrolled()
    step_up(user, session, None)
    attempt = throttle.second_factor_attempt(user.id, None)
    step = codes.matching_step(factor, code)
    if step is None:
        raise kept(InvalidSecondFactor())
    throttle.second_factor_succeeded(attempt)
    first_factor = not second_factors.has_passkey(user)
    factor.confirmed_at, factor.last_used_step = now(), step
    recovery = codes.new_recovery_codes(user) if first_factor else []
    sessions.revoke_all(user.id, "second_factor_added", except_session=session.id)
    audit.record(AuditName.SECOND_FACTOR_ADDED, client, user_id=user.id, session_id=session.id)
    second_factors.tell_owner(user, MailJob.SECOND_FACTOR_ADDED, "authenticator app")
    return recovery


@writes
def remove_totp(user: User, client: ClientInfo, session: AuthSession, code: str | None) -> None:
    """Remove the authenticator app, and the recovery codes unless a passkey still protects the
    account (step-up)."""
    if not second_factors.has_totp(user):
        raise NotEnrolled()
    step_up(user, session, code)
    db.session.execute(delete(TotpFactor).where(TotpFactor.user_id == user.id))
    second_factors.drop_recovery_codes_if_unprotected(user)
    audit.record(AuditName.SECOND_FACTOR_REMOVED, client, user_id=user.id, session_id=session.id)
    second_factors.tell_owner(user, MailJob.SECOND_FACTOR_REMOVED, "authenticator app")


@writes
def regenerate_recovery_codes(user: User, client: ClientInfo, session: AuthSession,
                              code: str | None) -> list[str]:
    """A new set of recovery codes; the old set stops working (step-up)."""
    if not second_factors.has_second_factor(user):
        raise NotEnrolled()
    step_up(user, session, code)
    recovery = codes.new_recovery_codes(user)
    audit.record(AuditName.RECOVERY_CODES_REGENERATED, client, user_id=user.id,
                 session_id=session.id)
    return recovery
