"""Security events: written to the audit table and to the log, never with a secret in them."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from app.db.rows import insert_values
from app.db.transactions import writes
from app.domain.clock import now
from app.domain.text import CONTROL_CHARACTERS
from app.models import AuditEvent
from app.observability import count_event

log = logging.getLogger("svc_auth.audit")
_UNPRINTABLE = re.compile(f"[{CONTROL_CHARACTERS}]")


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


def record(event: str, client: ClientInfo, *, user_id: str | None = None,
           session_id: str | None = None) -> None:
    """Write an event in the caller's unit of work."""
    insert_values(AuditEvent, at=now(), event=event, user_id=user_id, session_id=session_id,
                  ip=client.ip, user_agent=client.user_agent, actor=client.actor)
    log.info("event=%s user=%s session=%s ip=%s actor=%s", event, user_id, session_id,
             client.ip, client.actor)
    count_event(event)


@writes
def record_alone(event: str, client: ClientInfo, *, user_id: str | None = None,
                 session_id: str | None = None) -> None:
    """Write an event as a unit of work of its own (an operator's action with no other row)."""
    record(event, client, user_id=user_id, session_id=session_id)
