"""OpenID Connect Back-Channel Logout 1.0: when a session a client holds ends, the client is told
at its `backchannel_logout_uri` with a logout token, signed like the ID tokens, naming the
session by the `sid` its ID tokens carried (the browser session it was opened through, or
itself)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from app.domain.clock import system_clock
from app.domain.services import services
from app.extensions import db
from app.infra.settings import settings
from app.models import AuthSession

LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout"
TOKEN_TYPE = "logout+jwt"  # noqa: S105 (a media type)
TOKEN_TTL = 120  # seconds: the token is sent at once, and again only by a retry, freshly signed


@dataclass(frozen=True)
class ClientSession:
    client_id: str
    sid: str  # what its ID tokens named it by: the browser session it was opened through
    session_id: str  # its own id (its access tokens' `sid`)


def ended_client_sessions(session_ids: list[str]) -> list[ClientSession]:
    """The client sessions among `session_ids`."""
    if not session_ids:
        return []
    rows = db.session.execute(
        select(AuthSession.client_id, AuthSession.browser_session_id, AuthSession.id)
        .where(AuthSession.id.in_(session_ids), AuthSession.client_id.is_not(None)))
    return [ClientSession(str(client_id), browser_session_id or session_id, session_id)
            for client_id, browser_session_id, session_id in rows]


def logout_token(client_id: str, user_id: str, sid: str, jti: str) -> str:
    """The logout token: iss, aud, iat, exp, jti, events, sub and sid; never a nonce. Issued on
    the real clock, at the moment it is sent."""
    iat = int(system_clock().timestamp())
    claims: dict[str, Any] = {
        "iss": settings().public_url, "aud": client_id, "iat": iat,
        "exp": iat + TOKEN_TTL, "jti": jti, "sub": user_id, "sid": sid,
        "events": {LOGOUT_EVENT: {}},
    }
    return services().access_tokens.sign(claims, TOKEN_TYPE)
