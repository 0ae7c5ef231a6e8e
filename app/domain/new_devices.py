"""Telling the owner of a sign-in from a device the account has not used: a browser (its user
agent) on a network (an IPv4 address, or an IPv6 /64) that no session of the account still kept
had (device_names.device_of). The account's first session (its sign-up) is no news, and a known
device never mails."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import exists, select

from app.domain.audit import ClientInfo
from app.domain.clock import now
from app.domain.device_names import device_of
from app.domain.limits import throttle
from app.domain.mail.outbox import schedule
from app.extensions import db
from app.models import AuthSession, MailJob, User

# Someone with the password, signing in from device after device, would otherwise flood the
# owner's inbox and bury the other warnings among ours; the first mail says it already.
MAILS_AN_HOUR = 5


def is_new(user: User, client: ClientInfo) -> bool:
    """Whether a sign-in by `client` would be the account's first on this device (and not its
    first sign-in at all): two probes of one index, however many sessions the account has."""
    of_account = AuthSession.user_id == user.id
    known, any_session = db.session.execute(select(
        exists().where(of_account, AuthSession.device == device_of(client)),
        exists().where(of_account))).one()
    return bool(any_session) and not known


def tell_owner(user: User, client: ClientInfo) -> None:
    """Mail the account's own address, in the caller's unit of work: the device and the time,
    nothing the owner could not see on the account page. At most MAILS_AN_HOUR."""
    if not throttle.count_new_device_mail(user.id, MAILS_AN_HOUR, timedelta(hours=1)):
        return
    schedule(MailJob.NEW_DEVICE, {"to": user.email, "user_agent": client.user_agent,
                                  "at": now().isoformat()})
