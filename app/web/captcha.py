"""The captcha on a request: the token the client sent, checked with the client's address
(app/domain/limits/captcha.py), and the widget of the hosted pages with the CSP it needs.

The order on every endpoint is rate limit -> body -> captcha -> password hash: the views call
these after parsing the body and before anything hashes a password.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from flask import request

from app.domain import addresses
from app.domain.accounts import accounts
from app.domain.accounts.errors import InvalidCredentials
from app.domain.limits import captcha, captcha_login
from app.domain.limits.captcha_errors import CaptchaInvalid, CaptchaRequired
from app.domain.text import N_
from app.web.client import client_info
from app.web.headers import CONTENT_SECURITY_POLICY

# What each endpoint checks a token for (the metric's `purpose` label).
SIGNUP, LOGIN, FORGOT_PASSWORD, RESEND_CONFIRMATION, EMAIL_CODE = (
    "signup", "login", "forgot_password", "resend_confirmation", "email_code")


def check(purpose: str, untrusted_token: str) -> None:
    """Sign-up and the mail-sending endpoints: always asked (when the mode is not off)."""
    captcha.check(purpose, untrusted_token, client_info())


def check_signup(untrusted_email: str, password: str, untrusted_token: str) -> None:
    """Sign-up: the address and the password's policy first (InvalidBody), so that a person who
    mistyped is not asked to solve the captcha twice; then the captcha, before anything tells
    whether the address is taken. The breach lookup waits for the sign-up itself, after the
    captcha: no one asks the range API through us without solving one, and it is asked once."""
    accounts.check_password_policy(password, addresses.canonical(untrusted_email),
                                   breach_lookup=False)
    check(SIGNUP, untrusted_token)


@contextmanager
def login_guard(untrusted_email: str, untrusted_token: str) -> Iterator[None]:
    """Around a password sign-in: before it, counted as a failure, and the captcha when this
    email or address failed recently (a provider that does not answer lets the sign-in go on,
    under the throttles); after it, taken back unless the password was wrong."""
    if captcha.configured() is None:  # off: nothing read, nothing counted
        yield
        return
    client = client_info()
    counted = captcha_login.attempt(addresses.key(untrusted_email), client)
    try:
        if counted.needs_captcha:
            captcha.check(LOGIN, untrusted_token, client, unavailable_refuses=False)
        yield
    except InvalidCredentials:
        raise  # a failure, as it was counted
    except BaseException:
        captcha_login.not_a_failure(counted)
        raise
    captcha_login.login_succeeded(counted)


# The hosted pages' widget and words -------------------------------------------------------------

PAGE_WORDS = {
    CaptchaRequired.code: N_("Confirm that you are a person: complete the check below."),
    CaptchaInvalid.code: N_("The check did not pass or has expired. Complete it again."),
}


@dataclass(frozen=True)
class Widget:
    """What a page template needs to show the provider's widget."""

    script_url: str
    widget_class: str
    site_key: str
    action: str | None


def widget() -> Widget | None:
    """The widget for a page that asks for a captcha, or None when the mode is off."""
    settings = captcha.configured()
    if settings is None:
        return None
    return Widget(settings.script_url, settings.provider.widget_class, settings.site_key,
                  settings.action)


def login_widget(untrusted_email: str | None) -> Widget | None:
    """The sign-in form's widget: only when the next attempt will be asked for a token."""
    if not captcha_login.needs_captcha(
            addresses.key(untrusted_email) if untrusted_email else None, client_info()):
        return None
    return widget()


def form_token() -> str:
    """The token the widget put in the submitted form ("" when there is none)."""
    settings = captcha.configured()
    if settings is None:
        return ""
    untrusted = request.form.get(settings.provider.form_field, "")
    return untrusted[:4096]


def page_headers(shown: Widget | None) -> dict[str, str]:
    """A page that shows the widget lets the provider's origins in its CSP, and only those."""
    settings = captcha.configured()
    if shown is None or settings is None:
        return {}
    origins = " ".join(settings.origins)
    policy = CONTENT_SECURITY_POLICY
    if settings.provider.style_from_origins:
        policy = policy.replace("style-src 'self'", f"style-src 'self' {origins}")
    return {"Content-Security-Policy":
            f"{policy}; script-src {origins}; frame-src {origins}; connect-src {origins}"}
