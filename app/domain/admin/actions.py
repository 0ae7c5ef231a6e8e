"""What an operator or a service client does to an account, each one unit of work, audited with
who did it (`ClientInfo.actor`). The CLI, the admin API and the console all call these."""

from __future__ import annotations

from app.db.transactions import writes
from app.domain import audit, events
from app.domain.accounts import accounts, plans, recovery
from app.domain.audit import AuditName, ClientInfo
from app.domain.clock import now
from app.domain.events import EventType
from app.domain.factors import second_factors
from app.domain.lifecycle import leaving
from app.domain.sessions import sessions
from app.models import User


@writes
def create_invited(untrusted_email: str, full_name: str, plan: str | None,
                   by: ClientInfo) -> User:
    """An account with no password: its owner gets a mail with a link to choose one. On the
    default plan unless given one."""
    user = accounts.create_user(untrusted_email, None, full_name, plan)
    recovery.invite(user, by)
    audit.record(AuditName.ACCOUNT_CREATED, by, user_id=user.id, changes=audit.changed(
        email=(None, user.email), full_name=(None, user.full_name), plan=(None, user.plan)))
    return user


@writes
def update(user: User, by: ClientInfo, *, full_name: str | None = None,
           plan: str | None = None) -> User:
    """Change the name or the plan: every instance answers with the new one from the next
    request on (verify), and the next refresh's tokens carry it."""
    changes: dict[str, str] = {}
    if plan is not None and plan != user.plan:
        was, user.plan = user.plan, plans.check(plan)
        changes["plan"] = user.plan
        audit.record(AuditName.PLAN_CHANGED, by, user_id=user.id,
                     changes=audit.changed(plan=(was, user.plan)))
    if full_name is not None:
        changes |= accounts.rename(user, full_name, by)
    accounts.announce_changes(user.id, changes)
    return user


@writes
def disable(user: User, by: ClientInfo) -> User:
    """The account can no longer sign in, and its sessions end at once; also one its owner is
    leaving, whose restore link then leaves it disabled."""
    if not user.disabled_by_operator:
        user.disabled_by_operator, user.disabled_at = True, user.disabled_at or now()
        audit.record(AuditName.ACCOUNT_DISABLED, by, user_id=user.id,
                     changes=audit.changed(disabled=(False, True)))
        events.emit(EventType.USER_DISABLED, user.id)
    sessions.revoke_all(user.id, "account_disabled")
    return user


@writes
def enable(user: User, by: ClientInfo) -> User:
    """Let a disabled account sign in again (not one its owner is leaving: the owner's
    mailed link restores that)."""
    if user.deletion_scheduled_at is not None:
        raise leaving.DeletionScheduled()
    if user.disabled_at is not None:
        user.disabled_at, user.disabled_by_operator = None, False
        audit.record(AuditName.ACCOUNT_ENABLED, by, user_id=user.id,
                     changes=audit.changed(disabled=(True, False)))
        events.emit(EventType.USER_ENABLED, user.id)
    return user


@writes
def end_sessions(user: User, by: ClientInfo) -> int:
    """End every session of the account (and the sign-ins waiting for a second step)."""
    ended = sessions.revoke_all(user.id, "ended_by_operator", confirm=True)
    audit.record(AuditName.SESSIONS_ENDED, by, user_id=user.id,
                 changes=audit.changed(open_sessions=(ended, 0)))
    return ended


@writes
def clear_second_factors(user: User, by: ClientInfo) -> User:
    second_factors.reset(user, by)
    return user


@writes
def send_password_reset(user: User, by: ClientInfo) -> None:
    """A reset link to the account's address, as if its owner had asked."""
    recovery.request_reset(user.email, by)
    audit.record(AuditName.PASSWORD_RESET_SENT_BY_OPERATOR, by, user_id=user.id)


@writes
def delete(user: User, by: ClientInfo) -> User:
    """Close the account as its owner would (erased after the grace period, restorable by the
    owner's mailed link until then)."""
    leaving.schedule_deletion(user, by)
    return user


@writes
def set_operator(user: User, by: ClientInfo, *, operator: bool) -> User:
    """Let the account use the support console, or stop it (`flask users grant-operator`)."""
    if user.operator != operator:
        user.operator = operator
        audit.record(AuditName.OPERATOR_GRANTED if operator else AuditName.OPERATOR_REVOKED, by,
                     user_id=user.id, changes=audit.changed(operator=(not operator, operator)))
    return user
