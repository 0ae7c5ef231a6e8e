"""The browser session's glue: Flask-Login and the cookies. What a browser session is, and how
one opens, is the domain's (app/domain/sessions/browser_sessions.py).

Each sign-in also leaves a known-device cookie (domain/limits/known_devices.py), which outlives the
session: the next sign-in to that account from this browser is not held back by the failures of
strangers on it (domain/limits/throttle.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

import flask_login
from flask import after_this_request, current_app, redirect, request, session, url_for
from flask_login import UserMixin, current_user, login_user, logout_user
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.factors import pending
from app.domain.factors.pending import SecondFactorRequired
from app.domain.factors.second_factors import Purpose
from app.domain.limits import known_devices
from app.domain.sessions import browser_sessions, destinations, handoff, sessions
from app.domain.sessions.browser_sessions import BrowserSignIn
from app.domain.sessions.destinations import ToBrowser, ToSite
from app.domain.sign_in import HereSignIn, SiteSignIn
from app.extensions import login_manager
from app.models import AuthSession, User
from app.web import pending_authorization
from app.web.client import client_info
from app.web.targets import Target, send_back

P = ParamSpec("P")
R = TypeVar("R")

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


class BrowserUser(UserMixin):
    def __init__(self, auth_session: AuthSession) -> None:
        self.auth_session = auth_session
        self.user: User = auth_session.user

    def get_id(self) -> str:
        return self.auth_session.id


def _to_login() -> Response:
    # No `next` parameter: after signing in, the account page is where this person goes.
    return redirect(url_for("pages.login_form"))


def _load(session_id: str) -> BrowserUser | None:
    live = sessions.live_session(session_id)
    return BrowserUser(live) if live is not None else None


# Flask-Login ships no types: its hooks are registered by call, and its decorator typed here.
login_manager.unauthorized_handler(_to_login)
login_manager.user_loader(_load)


def login_required(view: Callable[P, R]) -> Callable[P, R]:
    """Flask-Login's `login_required`: the login page for a browser not signed in."""
    return cast("Callable[P, R]", flask_login.login_required(view))


def current() -> BrowserUser | None:
    found = current_user._get_current_object()  # noqa: SLF001 (Flask-Login's proxy)
    return found if isinstance(found, BrowserUser) else None


def here(target: Target | None) -> HereSignIn:
    """A sign-in of this browser: the session it held ends, a new one opens, and the person
    goes back to the client site `target` names with a code, or else to the OpenID Connect
    authorization request waiting for it, or else to the account page (`answer`). An account
    with a second factor goes through the second step page first."""
    previous = current()
    kept = session.get(KEEP_KEY) is not False
    return HereSignIn(destination=ToBrowser(target.hand_to() if target else None, kept),
                      client=client_info(),
                      replacing=previous.auth_session if previous else None)


def for_site(target: Target) -> SiteSignIn:
    """A sign-in a client site started through its API: no session here, a code for the site
    (after the second step page, for an account with a second factor)."""
    return SiteSignIn(destination=ToSite(target.hand_to()), client=client_info())


def answer(outcome: sign_in.Outcome, target: Target | None) -> Response:
    """Where the browser goes once a sign-in of the hosted pages is finished: the second step's
    page, or the client site with its code, or (signed in here) the waiting OpenID Connect
    authorization or the account page."""
    if isinstance(outcome, SecondFactorRequired):
        session[SECOND_STEP_KEY] = {"token": outcome.token}
        return redirect(url_for("pages.second_step_form", **(target.query() if target else {})))
    if isinstance(outcome, BrowserSignIn):
        _hold(outcome.session)
        if outcome.code is None:
            return redirect(pending_authorization.resume_url() or url_for("pages.account"))
        assert target is not None
        return send_back(target, code=outcome.code, provider=outcome.session.provider)
    assert isinstance(outcome, sign_in.SiteCode) and target is not None
    return send_back(target, code=outcome.code, provider=outcome.provider)


# The second step of a sign-in on the hosted pages: this browser's (signed) cookie holds the
# pending sign-in's token, which keeps where the sign-in goes (domain/factors/pending.py).
SECOND_STEP_KEY = "svc_second_step"


def held_second_step(target: Target | None) -> str | None:
    """The token of the pending sign-in this browser holds, when `target` is where it goes."""
    held = session.get(SECOND_STEP_KEY)
    token = held.get("token") if isinstance(held, dict) else None
    if not isinstance(token, str):
        return None
    kept = destinations.hand_to(pending.destination(token, Purpose.HOSTED))
    return token if kept == (target.hand_to() if target else None) else None


def drop_second_step() -> None:
    session.pop(SECOND_STEP_KEY, None)


KEEP_KEY = "svc_keep_signed_in"  # the sign-in form's choice, until the sign-in is done


def keep_signed_in(keep: bool) -> None:
    """The password form's "Keep me signed in", for the sign-in it starts (through its second
    step). A sign-in without the form (a provider, a passkey) keeps today's 30 days."""
    session[KEEP_KEY] = keep


def _hold(auth_session: AuthSession) -> None:
    """Keep the new session in this browser's cookie. Whatever the cookie held before is
    dropped, so nothing planted in it before sign-in survives (session fixation). Not kept
    signed in: a cookie that ends with the browser, and a session that ends within hours."""
    keep = session.get(KEEP_KEY) is not False
    session.clear()
    login_user(BrowserUser(auth_session))
    session.permanent = keep
    if not keep:
        browser_sessions.shorten(auth_session)
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
                              second_factor=browser_user.auth_session.second_factor,
                              browser_session_id=browser_user.auth_session.id)
    return send_back(target, code=code, provider=provider)
