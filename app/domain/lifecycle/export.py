"""Taking one's data: what the service holds about an account, as JSON, without a secret (no
hash, no key, no code, no token)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select

from app.db.transactions import writes
from app.domain import audit
from app.domain.audit import AuditName, ClientInfo
from app.domain.factors import second_factors
from app.extensions import db
from app.models import AuditEvent, AuthSession, ConsentGrant, Identity, Passkey, User


def _time(at: datetime | None) -> str | None:
    return at.isoformat() if at else None


def _rows(model: Any, user_id: str, order: Any) -> list[Any]:
    return list(db.session.scalars(select(model).where(model.user_id == user_id)
                                   .order_by(order)))


@writes
def export(user: User, client: ClientInfo) -> dict[str, Any]:
    """The account's data (audited: `account_exported`)."""
    audit.record(AuditName.ACCOUNT_EXPORTED, client, user_id=user.id)
    summary = second_factors.summary(user)
    return {
        "profile": {"id": user.id, "email": user.email, "full_name": user.full_name,
                    "plan": user.plan, "email_verified": user.email_verified,
                    "created_at": _time(user.created_at)},
        "providers": [{"provider": i.provider, "subject": i.subject, "email": i.email,
                       "linked_at": _time(i.created_at)}
                      for i in _rows(Identity, user.id, Identity.created_at)],
        "sessions": [{"created_at": _time(s.created_at), "last_used_at": _time(s.last_used_at),
                      "ended_at": _time(s.revoked_at), "device": s.user_agent, "ip": s.ip,
                      "site": s.client_id}
                     for s in _rows(AuthSession, user.id, AuthSession.created_at)],
        "second_factors": {"authenticator_app": summary.totp,
                           "recovery_codes_left": summary.recovery_codes_left},
        "passkeys": [{"name": p.name, "created_at": _time(p.created_at)}
                     for p in _rows(Passkey, user.id, Passkey.created_at)],
        "consents": [{"client_id": c.client_id, "scope": c.scope,
                      "granted_at": _time(c.granted_at)}
                     for c in _rows(ConsentGrant, user.id, ConsentGrant.granted_at)],
        "audit_events": [_event(e) for e in _rows(AuditEvent, user.id, AuditEvent.id)],
    }


# Who acted, as the owner reads it: a role, never the person, their address or their device.
_ROLES = {"client": None, "operator": "support", "cli": "administrator", "purge": "service"}


def _by(actor: str | None) -> str | None:
    """None for the requests made to the account itself (its sign-ins, refreshes)."""
    if actor is None:
        return None
    kind, _, name = actor.partition(":")
    role = _ROLES.get(kind, "service")
    return role or name  # a service client is named for its job: `billing`, `support`


def _event(event: AuditEvent) -> dict[str, Any]:
    """What was done and when, and by whom as a role; where from only for the owner's own."""
    own = event.actor is None
    return {"at": _time(event.at), "event": event.event, "by": _by(event.actor),
            "changes": event.changes, "ip": event.ip if own else None,
            "device": event.user_agent if own else None}
