"""Step-up: before a change to how an account signs in, proof that its holder is here now."""

from __future__ import annotations

from datetime import timedelta

from app.db.transactions import kept
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.factors import codes, second_factors
from app.domain.factors.errors import InvalidSecondFactor, StepUpRequired
from app.domain.limits import throttle
from app.infra.settings import settings
from app.models import AuthSession, User


def recently_signed_in(session: AuthSession) -> bool:
    return now() - session.created_at <= timedelta(
        seconds=settings().step_up_seconds)


def step_up(user: User, session: AuthSession, code: str | None, *,
            recent_suffices: bool = True) -> None:
    """In the caller's unit of work: the session must have signed in within STEP_UP_SECONDS
    (unless not `recent_suffices`), or `code` be a fresh code of the account's second factor
    (used up, like any). StepUpRequired otherwise; InvalidSecondFactor (kept: counted against
    the account) for a wrong code."""
    if recent_suffices and recently_signed_in(session):
        return
    if not code or not second_factors.has_second_factor(user):
        raise StepUpRequired()
    attempt = throttle.second_factor_attempt(user.id, None)
    if codes.use_code(user, code) is None:
        audit.record(AuditName.SECOND_FACTOR_FAILED, ClientInfo(), user_id=user.id,
                     session_id=session.id)
        raise kept(InvalidSecondFactor())
    throttle.second_factor_succeeded(attempt)
