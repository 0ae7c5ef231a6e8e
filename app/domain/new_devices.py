"""Telling the owner of a sign-in from a device the account has not used: a browser (its user
agent) on a network (an IPv4 address, or an IPv6 /64) that no earlier session of the account
had. The account's first session (its sign-up) is no news, and a known device never mails."""

from __future__ import annotations

from sqlalchemy import select

from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.limits.throttle import network_key
from app.domain.mail.outbox import schedule
from app.extensions import db
from app.models import AuthSession, MailJob, User

LOOKED_AT = 500  # the account's latest sessions: a device unused for longer is news again


def is_new(user: User, client: ClientInfo) -> bool:
    """Whether a sign-in by `client` would be the account's first on this device (and not its
    first sign-in at all)."""
    earlier = list(db.session.execute(
        select(AuthSession.ip, AuthSession.user_agent).where(AuthSession.user_id == user.id)
        .order_by(AuthSession.created_at.desc()).limit(LOOKED_AT)))
    if not earlier:
        return False
    network = network_key(client.ip)
    return not any(agent == client.user_agent and network_key(ip) == network
                   for ip, agent in earlier)


def tell_owner(user: User, client: ClientInfo) -> None:
    """Mail the account's own address, in the caller's unit of work: the device and the time,
    nothing the owner could not see on the account page."""
    schedule(MailJob.NEW_DEVICE, {"to": user.email, "user_agent": client.user_agent,
                                  "at": now().isoformat()})
