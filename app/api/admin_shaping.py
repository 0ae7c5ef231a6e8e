"""The admin API's JSON: what an operator may see of an account, never a hash, a key, a code
or a token."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.domain import deliveries
from app.domain.admin.directory import Profile, status_of
from app.domain.admin.pages import Page
from app.models import AuditEvent, User


def _time(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at else None


def admin_user_json(user: User) -> dict[str, Any]:
    return {"id": user.id, "email": user.email, "full_name": user.full_name,
            "plan": user.plan, "status": status_of(user).value,
            "email_verified": user.email_verified, "created_at": _time(user.created_at),
            "disabled_at": _time(user.disabled_at)}


def profile_json(found: Profile) -> dict[str, Any]:
    return {**admin_user_json(found.user), "operator": found.user.operator,
            "providers": found.providers, "second_factors": found.second_factors,
            "passkeys": found.passkeys, "open_sessions": found.open_sessions,
            "last_sign_in_at": _time(found.last_sign_in)}


def users_page_json(page: Page[User]) -> dict[str, Any]:
    return {"users": [admin_user_json(user) for user in page.items],
            "next_cursor": page.next_cursor}


def event_json(event: AuditEvent) -> dict[str, Any]:
    return {"id": event.id, "at": _time(event.at), "event": event.event,
            "actor": event.actor, "actor_email": event.actor_email, "read": event.read,
            "changes": event.changes, "session_id": event.session_id, "ip": event.ip,
            "user_agent": event.user_agent}


def events_page_json(page: Page[AuditEvent]) -> dict[str, Any]:
    return {"events": [event_json(event) for event in page.items],
            "next_cursor": page.next_cursor}


def deliveries_json(found: list[deliveries.Listed]) -> dict[str, Any]:
    return {"deliveries": [
        {"id": d.delivery.id, "event_id": d.delivery.event_id, "event_type": d.event_type,
         "site": d.delivery.site, "kind": d.delivery.kind, "status": d.delivery.status,
         "attempts": d.delivery.attempts, "last_error": d.delivery.last_error,
         "next_attempt_at": _time(d.delivery.next_attempt_at)
         if d.delivery.status == "pending" else None,
         "created_at": _time(d.delivery.created_at)} for d in found]}
