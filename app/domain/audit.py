"""Security events: written to the audit table and to the log, never with a secret in them.

A change carries its before and after values, of the fields in AUDITED_FIELDS only; a read by an
operator or a service client is recorded too, marked as one (`read`), so that listings can leave
reads out without the trail losing them. Why: docs/security/audit.md."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NewType, cast

from sqlalchemy import Table, insert, select

from app.db.rows import insert_values
from app.db.transactions import writes
from app.domain.clock import now
from app.domain.text import CONTROL_CHARACTERS
from app.extensions import db
from app.models import AuditEvent, User
from app.observability import count_event

log = logging.getLogger("svc_auth.audit")
_UNPRINTABLE = re.compile(f"[{CONTROL_CHARACTERS}]")

# The fields whose values an event may carry: what an account shows its operators, never a
# password hash, a key, a code or a token. Any other name is a programming error.
AUDITED_FIELDS = frozenset({
    "email", "full_name", "plan", "language", "disabled", "operator", "deletion_scheduled",
    "email_verified", "second_factors", "open_sessions",
})
Changes = dict[str, dict[str, Any]]
OPERATOR = "operator:"  # the actor of what an operator does in the console: operator:<id>


class AuditName(StrEnum):
    """Every event the domain writes to the audit trail, as the table and the log hold it (the
    values never change: exports, operators' queries and alerts name them)."""

    ACCOUNT_CREATED = "account_created"
    ACCOUNT_DISABLED = "account_disabled"
    ACCOUNT_ENABLED = "account_enabled"
    ACCOUNT_ERASED = "account_erased"
    ACCOUNT_EXPORTED = "account_exported"
    CAPTCHA_UNAVAILABLE = "captcha_unavailable"
    CHANGE_EMAIL_SENT = "change_email_sent"
    CLIENT_TOKEN_ISSUED = "client_token_issued"  # noqa: S105 (an event name)
    CONFIRM_EMAIL_SENT = "confirm_email_sent"
    CONSENT_GIVEN = "consent_given"
    DELETION_CANCELLED = "deletion_cancelled"
    DELETION_SCHEDULED = "deletion_scheduled"
    EMAIL_CHANGE_REQUESTED = "email_change_requested"
    EMAIL_CHANGE_UNDONE = "email_change_undone"
    EMAIL_CHANGED = "email_changed"
    EMAIL_CONFIRMED = "email_confirmed"
    HANDOFF_CODE_REFUSED = "handoff_code_refused"
    HANDOFF_CODE_REPLAYED = "handoff_code_replayed"
    LOGIN_FAILED = "login_failed"
    LOGIN_SUCCEEDED = "login_succeeded"
    LOGOUT_GLOBAL = "logout_global"
    LOGOUT_LOCAL = "logout_local"
    LOGOUT_OTHERS = "logout_others"
    OPERATOR_GRANTED = "operator_granted"
    OPERATOR_REVOKED = "operator_revoked"
    PASSKEY_ADDED = "passkey_added"
    PASSKEY_REMOVED = "passkey_removed"
    PASSWORD_CHANGED = "password_changed"  # noqa: S105 (an event name)
    PASSWORD_RESET = "password_reset"  # noqa: S105 (an event name)
    PASSWORD_RESET_SENT_BY_OPERATOR = "password_reset_sent_by_operator"  # noqa: S105 (an event name)
    PLAN_CHANGED = "plan_changed"
    PROFILE_CHANGED = "profile_changed"
    PASSWORD_SET = "password_set"  # noqa: S105 (an event name): a first password
    # A password set before anyone proved the address, removed when its holder first proved it.
    UNPROVED_PASSWORD_REMOVED = "unproved_password_removed"  # noqa: S105 (an event name)
    EMAIL_CODE_SENT = "email_code_sent"
    EMAIL_CODE_FAILED = "email_code_failed"
    PROVIDER_LINK_NEEDS_PROOF = "provider_link_needs_proof"
    PROVIDER_LINKED_GITHUB = "provider_linked_github"
    PROVIDER_LINKED_GOOGLE = "provider_linked_google"
    PROVIDER_TOOK_OVER = "provider_took_over"
    PROVIDER_UNLINKED_GITHUB = "provider_unlinked_github"
    PROVIDER_UNLINKED_GOOGLE = "provider_unlinked_google"
    RECOVERY_CODES_REGENERATED = "recovery_codes_regenerated"
    REFRESH_TOKEN_REUSED = "refresh_token_reused"  # noqa: S105 (an event name)
    RESET_PASSWORD_SENT = "reset_password_sent"  # noqa: S105 (an event name)
    SECOND_FACTOR_ADDED = "second_factor_added"
    SECOND_FACTOR_FAILED = "second_factor_failed"
    SECOND_FACTOR_REMOVED = "second_factor_removed"
    SECOND_FACTOR_VERIFIED = "second_factor_verified"
    SECOND_FACTORS_RESET = "second_factors_reset"
    SESSIONS_ENDED = "sessions_ended"
    SIGNED_UP = "signed_up"
    SIGNING_KEY_REVOKED = "signing_key_revoked"
    TOKEN_REFRESHED = "token_refreshed"  # noqa: S105 (an event name)
    TOKEN_REVOKED = "token_revoked"  # noqa: S105 (an event name)
    UNDO_DELETION_SENT = "undo_deletion_sent"
    UNDO_EMAIL_CHANGE_SENT = "undo_email_change_sent"

    @classmethod
    def logout(cls, scope: str) -> AuditName:
        """logout_local, logout_others or logout_global (sessions.LogoutScope's values)."""
        return cls(f"logout_{scope}")

    @classmethod
    def provider_linked(cls, provider: str) -> AuditName:
        return cls(f"provider_linked_{provider}")

    @classmethod
    def provider_unlinked(cls, provider: str) -> AuditName:
        return cls(f"provider_unlinked_{provider}")

    @classmethod
    def link_sent(cls, purpose: str) -> AuditName:
        """A mailed link of a OneTimeToken purpose went out."""
        return cls(f"{purpose}_sent")


class ViewFamily(StrEnum):
    """The events of the operators' and service clients' views, one per view: `family:view`
    (app/web/trail.py)."""

    ADMIN_API = "admin_api"
    ADMIN_API_REFUSED = "admin_api_refused"
    CONSOLE = "console"


ViewEvent = NewType("ViewEvent", str)
Event = AuditName | ViewEvent


def of_view(family: ViewFamily, view: str) -> ViewEvent:
    """The event of a view of the admin API or the console, named by its endpoint."""
    return ViewEvent(f"{family}:{view}")


@dataclass(frozen=True)
class ClientInfo:
    """Who is asking, as far as the request tells: kept with sessions and audit events."""

    ip: str | None = None
    user_agent: str | None = None
    # Who acts on the account when not its owner: `client:<name>`, `operator:<id>`, `cli`.
    actor: str | None = None

    @classmethod
    def of(cls, ip: str | None, user_agent: str | None) -> ClientInfo:
        agent = _UNPRINTABLE.sub("", user_agent or "")[:255] or None
        return cls(ip=(ip or None) and ip[:45], user_agent=agent)


def _check_fields(names: Iterable[str]) -> None:
    unknown = set(names) - AUDITED_FIELDS
    if unknown:
        raise ValueError(f"not an audited field: {sorted(unknown)}")


def changed(**before_after: tuple[Any, Any]) -> Changes:
    """`changed(plan=("free", "pro"))`: the fields whose value differs, with both values.
    ValueError for a field outside AUDITED_FIELDS, so that no secret is written by mistake."""
    _check_fields(before_after)
    return {name: {"before": before, "after": after}
            for name, (before, after) in before_after.items() if before != after}


def _row(event: Event, client: ClientInfo, actor_email: str | None, user_id: str | None,
         session_id: str | None, changes: Changes | None, read: bool) -> dict[str, Any]:
    _check_fields(changes or ())
    return {"at": now(), "event": event, "user_id": user_id, "session_id": session_id,
            "ip": client.ip, "user_agent": client.user_agent, "actor": client.actor,
            "actor_email": actor_email, "read": read, "changes": changes or None}


def _address_of(actor: str | None) -> str | None:
    """An operator's address as it is when they act (ClientInfo travels in mail jobs, which
    instances of another version read: it keeps its shape)."""
    if actor is None or not actor.startswith(OPERATOR):
        return None
    return db.session.scalar(select(User.email).where(User.id == actor[len(OPERATOR):]))


def record(event: Event, client: ClientInfo, *, user_id: str | None = None,
           session_id: str | None = None, changes: Changes | None = None) -> None:
    """Write an event in the caller's unit of work."""
    insert_values(AuditEvent, **_row(event, client, _address_of(client.actor), user_id,
                                     session_id, changes, False))
    log.info("event=%s user=%s session=%s ip=%s actor=%s changed=%s", event, user_id,
             session_id, client.ip, client.actor, ",".join(sorted(changes or ())) or "-")
    count_event(event)


@writes
def record_alone(event: Event, client: ClientInfo, *, user_id: str | None = None,
                 session_id: str | None = None) -> None:
    """Write an event as a unit of work of its own (an operator's action with no other row)."""
    record(event, client, user_id=user_id, session_id=session_id)


@writes
def record_reads(event: Event, client: ClientInfo, user_ids: Iterable[str | None]) -> None:
    """An operator or a service client saw these accounts (None: no account in particular), as
    one unit of work and one statement however many they were."""
    address = _address_of(client.actor)
    rows = [_row(event, client, address, user_id, None, None, True) for user_id in user_ids]
    db.session.execute(insert(cast(Table, AuditEvent.__table__)), rows)  # Core: one INSERT
    log.info("event=%s users=%s ip=%s actor=%s", event,
             ",".join(str(row["user_id"]) for row in rows), client.ip, client.actor)
    count_event(event)


def not_written(event: Event, client: ClientInfo, user_ids: Iterable[str | None],
                error: Exception) -> None:
    """An event the database did not take: the log keeps it, so that it is not lost silently."""
    log.error("audit event not written (%s): event=%s users=%s ip=%s actor=%s",
              type(error).__name__, event, ",".join(str(u) for u in user_ids), client.ip,
              client.actor)
