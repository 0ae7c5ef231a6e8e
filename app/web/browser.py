"""The browser session's glue: Flask-Login and the cookies. What a browser session is, and how
one opens, is the domain's (app/domain/sessions/browser_sessions.py).

Each sign-in also leaves a known-device cookie (domain/limits/known_devices.py), which outlives the
session: the next sign-in to that account from this browser is not held back by the failures of
strangers on it (domain/limits/throttle.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from flask import Response, after_this_request, current_app, redirect, request, session, url_for
from flask_login import UserMixin, current_user, login_user, logout_user

from app.domain.factors import second_factors
from app.domain.factors.second_factors import SecondFactorRequired
from app.domain.limits import known_devices
from app.domain.sessions import browser_sessions, handoff, sessions
from app.domain.sessions.browser_sessions import BrowserSignIn
from app.extensions import login_manager
from app.models import AuthSession, PendingSignIn, User
from app.web import pending_authorization
from app.web.client import client_info
from app.web.targets import Target, send_back

T = TypeVar("T")
DEVICE_COOKIE_DAYS = 400  # the longest a browser keeps a cookie (RFC 6265bis)


def _device_cookie_name() -> str:
    return "__Host-svc_device" if current_app.config["SESSION_COOKIE_SECURE"] else "svc_device"


def device_cookie() -> str | None:
    """The known-device cookie this browser sent, unchecked."""
    return request.cookies.get(_device_cookie_name())


def _remember_device(user: User) -> None:
    value = known_devices.remember(device_cookie(), user.id)

    @after_this_request
    def set_cookie(response: Response) -> Response:
        response.set_cookie(_device_cookie_name(), value, max_age=DEVICE_COOKIE_DAYS * 86400,
                            path="/", secure=current_app.config["SESSION_COOKIE_SECURE"],
                            httponly=True, samesite="Lax")
        return response


class BrowserUser(UserMixin):  # type: ignore[misc]
    def __init__(self, auth_session: AuthSession) -> None:
        self.auth_session = auth_session
        self.user: User = auth_session.user

    def get_id(self) -> str:
        return self.auth_session.id


@login_manager.unauthorized_handler
def _to_login() -> Response:
    # No `next` parameter: after signing in, the account page is where this person goes.
    return redirect(url_for("pages.login_form"))


@login_manager.user_loader
def _load(session_id: str) -> BrowserUser | None:
    live = sessions.live_session(session_id)
    return BrowserUser(live) if live is not None else None


def current() -> BrowserUser | None:
    found = current_user._get_current_object()  # noqa: SLF001 (Flask-Login's proxy)
    return found if isinstance(found, BrowserUser) else None


@dataclass(frozen=True)
class Landing(Generic[T]):
    """The two halves of a sign-in that ends on this service's side: `opening` runs inside the
    domain's unit of work (sessions/sessions.py, Opening); `land` answers once it has committed."""

    opening: sessions.Opening[T]
    land: Callable[[T, str], Response]

    def complete(self, user: User, provider: str) -> Response:
        """For a user whose credential was already authenticated: open, then land."""
        return self.land(self.opening(user, provider), provider)


def sign_in_here(target: Target | None, *, second_step_done: bool = False) -> Landing[Any]:
    """Sign this browser in: the session it held ends, a new one opens, and the person goes
    back to the client site `target` names with a code, or else to the OpenID Connect
    authorization request that waits for this sign-in, or else to the account page. For an
    account with a second factor, unless `second_step_done`: the second step page first."""
    previous = current()
    opening = browser_sessions.for_browser(
        client_info(), replacing=previous.auth_session if previous else None,
        hand_to=target.hand_to() if target else None)

    def land(opened: BrowserSignIn, provider: str) -> Response:
        _hold(opened.session)
        if target is None:
            return redirect(pending_authorization.resume_url() or url_for("pages.account"))
        assert opened.code is not None
        return send_back(target, code=opened.code, provider=provider)

    landing = Landing(opening, land)
    return landing if second_step_done else _second_step_first(landing, HERE, target)


def code_for_site(target: Target, *, second_step_done: bool = False) -> Landing[Any]:
    """A sign-in a client site started through its API: no session here, a code for the site
    (after the second step page, for an account with a second factor)."""
    landing = Landing(handoff.code_for(target.hand_to()),
                      lambda code, provider: send_back(target, code=code, provider=provider))
    return landing if second_step_done else _second_step_first(landing, SITE, target)


# The second step of a sign-in on the hosted pages: the pending sign-in's token is kept in this
# browser's (signed) cookie with where the sign-in ends, HERE or at a client SITE, and the
# target it returns to. The domain keeps the rest (domain/factors/second_factors.py).
SECOND_STEP_KEY = "svc_second_step"
HERE, SITE = "here", "site"


def _second_step_first(landing: Landing[T], ends: str,
                       target: Target | None) -> Landing[T | SecondFactorRequired]:
    def land(opened: T | SecondFactorRequired, provider: str) -> Response:
        if not isinstance(opened, SecondFactorRequired):
            return landing.land(opened, provider)
        query = target.query() if target else {}
        session[SECOND_STEP_KEY] = {"token": opened.token, "ends": ends, "query": query}
        return redirect(url_for("pages.second_step_form", **query))

    return Landing(second_factors.gated(landing.opening, PendingSignIn.HOSTED), land)


def pending_second_step(target: Target | None) -> tuple[str, Landing[Any]] | None:
    """The pending sign-in's token this browser holds, and the landing that completes it, when
    `target` is the one it started with."""
    held = session.get(SECOND_STEP_KEY)
    if not isinstance(held, dict) or held.get("query") != (target.query() if target else {}):
        return None
    if held.get("ends") == SITE:
        if target is None:
            return None
        return str(held["token"]), code_for_site(target, second_step_done=True)
    return str(held["token"]), sign_in_here(target, second_step_done=True)


def drop_second_step() -> None:
    session.pop(SECOND_STEP_KEY, None)


def _hold(auth_session: AuthSession) -> None:
    """Keep the new session in this browser's cookie. Whatever the cookie held before is
    dropped, so nothing planted in it before sign-in survives (session fixation)."""
    session.clear()
    login_user(BrowserUser(auth_session))
    session.permanent = True
    _remember_device(auth_session.user)


def sign_out() -> None:
    signed_in = current()
    if signed_in is not None:
        sessions.log_out(signed_in.auth_session.id, signed_in.user.id, sessions.LogoutScope.LOCAL,
                         client_info())
    forget()


def forget() -> None:
    """Drop this browser's hold on a session that has already ended."""
    logout_user()
    session.clear()


def hand_back(browser_user: BrowserUser, target: Target) -> Response:
    """Send a signed-in person to a client site with a fresh one-time code (single sign-on)."""
    provider = browser_user.auth_session.provider
    code = handoff.issue_code(browser_user.user, provider, target.hand_to(),
                              second_factor=browser_user.auth_session.second_factor)
    return send_back(target, code=code, provider=provider)
