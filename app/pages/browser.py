"""The service's own browser session (Flask-Login), backed by a session row like any other, so
it shows in the account's session list and ends with "sign out everywhere" or a password reset.

Each sign-in also leaves a known-device cookie (domain/known_devices.py), which outlives the
session: the next sign-in to that account from this browser is not held back by the failures of
strangers on it (domain/throttle.py)."""

from __future__ import annotations

from flask import Response, after_this_request, current_app, redirect, request, session, url_for
from flask_login import UserMixin, current_user, login_user, logout_user

from app.api.shaping import client_info
from app.database import writes
from app.domain import handoff, known_devices, sessions
from app.extensions import db, login_manager
from app.models import AuthSession, User
from app.targets import Target, send_back

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


@writes
def sign_in(user: User, provider: str) -> BrowserUser:
    """Sign this browser in as `user`. Whatever the cookie held before is dropped first, so a
    session planted before sign-in is worth nothing after it (session fixation)."""
    previous = current()
    if previous is not None:  # signing in again: the session this cookie held ends
        sessions.log_out(previous.auth_session.id, previous.user.id, sessions.LogoutScope.LOCAL,
                         client_info())
    auth_session = sessions.open_session(user, provider, client_info())
    db.session.commit()
    session.clear()
    browser_user = BrowserUser(auth_session)
    login_user(browser_user)
    session.permanent = True
    _remember_device(user)
    return browser_user


def sign_out() -> None:
    signed_in = current()
    if signed_in is not None:
        sessions.log_out(signed_in.auth_session.id, signed_in.user.id, sessions.LogoutScope.LOCAL,
                         client_info())
    logout_user()
    session.clear()


def hand_back(browser_user: BrowserUser, target: Target) -> Response:
    """Send a signed-in person to a client site with a fresh one-time code."""
    provider = browser_user.auth_session.provider
    code = handoff.issue(browser_user.user, provider, target.redirect_uri, target.code_challenge)
    return send_back(target, code=code, provider=provider)
