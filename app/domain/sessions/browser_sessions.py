"""The service's own browser session, as the domain sees it: a session row like any other (so it
shows in the account's session list and ends with "sign out everywhere" or a reset), opened when
a person signs in on the hosted pages. The Flask-Login and cookie side is app/web/browser.py."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.db.transactions import writes
from app.domain.audit import ClientInfo
from app.domain.sessions import handoff, sessions
from app.extensions import db
from app.infra.settings import settings
from app.models import AuthSession, User


@dataclass(frozen=True)
class BrowserSignIn:
    session: AuthSession
    code: str | None  # for the client site the sign-in came from, if any


def shorten(session: AuthSession) -> None:
    """A browser session not kept signed in: it ends BROWSER_SESSION_SHORT_SECONDS after it
    began, whatever the browser does with its cookie. One opened so (`kept`) costs nothing."""
    limit = session.created_at + _short()
    if session.expires_at > limit:
        _shorten(session, limit)


@writes
def _shorten(session: AuthSession, limit: datetime) -> None:
    live = db.session.get(AuthSession, session.id)
    if live is not None and live.expires_at > limit:
        live.expires_at = limit


def _short() -> timedelta:
    return timedelta(seconds=settings().browser_session_short_seconds)


@writes
def open_browser_session(user: User, provider: str, client: ClientInfo, *,
                         replacing: AuthSession | None, hand_to: handoff.HandTo | None,
                         second_factor: str | None = None, kept: bool = True) -> BrowserSignIn:
    """Sign a browser in as `user`, in one unit of work: the session the browser held before
    ends (so one planted before sign-in is worth nothing after it: session fixation), a new one
    opens, and the client site it came from gets a code. `second_factor`: the one the sign-in
    proved, if any; not `kept` signed in, the session opens short (`shorten`)."""
    if replacing is not None:
        # Not a logout the person waits on: the new sign-in answers, the revocation is shared
        # as soon as Redis takes it.
        sessions.log_out(replacing.id, replacing.user_id, sessions.LogoutScope.LOCAL, client,
                         confirm=False)
    session = sessions.open_session(user, provider, client, second_factor=second_factor,
                                    lasting=None if kept else _short())
    code = (handoff.issue_code(user, provider, hand_to, second_factor=second_factor,
                               browser_session_id=session.id)
            if hand_to is not None else None)
    return BrowserSignIn(session, code)


_SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def site_signed_out_of(untrusted_session_id: str | None, browser_session: AuthSession) -> bool:
    """Whether a client site's session opened through `browser_session` (by a handoff code) has
    ended and is named by `untrusted_session_id`: the site's sign-out asking that the browser
    session end too. Only the site holds that id (its tokens' `sid`), so a page elsewhere
    cannot sign a person out this way (that asks them first)."""
    if not untrusted_session_id or not _SESSION_ID.match(untrusted_session_id):
        return False
    site_session = db.session.get(AuthSession, untrusted_session_id)
    return (site_session is not None and site_session.site is not None
            and site_session.user_id == browser_session.user_id
            and site_session.browser_session_id == browser_session.id
            and site_session.revoked_at is not None)
