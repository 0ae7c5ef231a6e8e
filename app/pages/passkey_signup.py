"""Signing up with a passkey: an address, the code mailed to it, then the passkey the browser
makes (domain: app/domain/accounts/passkey_signup.py). The new account is signed in once the
code proves its address; the last page adds its passkey through the account page's ceremony
(app/pages/passkeys.py), which also shows its recovery codes."""

from __future__ import annotations

from flask import redirect, render_template, url_for
from flask_babel import get_locale
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.accounts import passkey_signup
from app.domain.accounts.email_code_errors import InvalidEmailCode
from app.domain.accounts.errors import EmailTaken
from app.domain.errors import InvalidBody, RateLimited
from app.domain.factors import passkeys
from app.domain.limits.captcha_errors import CaptchaProblem, CaptchaUnavailable
from app.domain.sessions.destinations import ToBrowser
from app.domain.sign_in import HereSignIn
from app.models import AuthSession
from app.pages.blueprint import bp, refusal, too_many
from app.pages.forms import (
    PasskeyAddForm,
    PasskeySignupForm,
    SignupCodeForm,
    add_error,
    field_errors,
    passkey_form,
    required_text,
)
from app.web import browser, captcha, ratelimits
from app.web.browser import login_required
from app.web.client import client_info
from app.web.headers import with_own_script

Page = str | tuple[str, int] | tuple[str, int, dict[str, str]] | Response
TEMPLATE = "pages/signup_passkey.html"

# The sign-up page offers this way only where browsers can make passkeys for the service.
bp.add_app_template_global(passkeys.available, "passkeys_available")


def _address_page(form: PasskeySignupForm, status: int = 200) -> Page:
    widget = captcha.widget()
    return render_template(TEMPLATE, form=form, captcha=widget), status, \
        captcha.page_headers(widget)


def _code_page(form: SignupCodeForm, status: int = 200) -> Page:
    return render_template(TEMPLATE, code_form=form), status


@bp.get("/signup/passkey")
def passkey_signup_form() -> Page:
    return _address_page(PasskeySignupForm())


@bp.post("/signup/passkey")
@ratelimits.signup
def passkey_signup_submit() -> Page:
    form = PasskeySignupForm()
    if not form.validate_on_submit():
        return _address_page(form, 422)
    try:
        captcha.check(captcha.SIGNUP, captcha.form_token())
        email = passkey_signup.begin(required_text(form.email), client_info(),
                                     str(get_locale()))
    except CaptchaUnavailable as error:
        return refusal(error)
    except CaptchaProblem as problem:
        form.form_errors.append(captcha.PAGE_WORDS[problem.code])
        return _address_page(form, problem.status)
    except InvalidBody as error:
        field_errors(form, error)
        return _address_page(form, 422)
    except EmailTaken as error:  # as the password sign-up says it
        add_error(form.email, f"{error.detail} Sign in instead, or reset your password.")
        return _address_page(form, 409)
    except RateLimited as error:
        form.form_errors.append(too_many(error.detail, error.retry_after))
        return refusal(error, _address_page(form, error.status))
    return _code_page(SignupCodeForm(formdata=None, email=email,
                                     full_name=form.full_name.data or ""))


@bp.post("/signup/passkey/code")
@ratelimits.signup
def passkey_signup_code() -> Page:
    form = SignupCodeForm()
    if not form.validate_on_submit():
        return _code_page(form, 422)
    try:
        _, outcome = sign_in.sign_up_with_code(
            required_text(form.email), required_text(form.code), form.full_name.data or "",
            HereSignIn(destination=ToBrowser(), client=client_info(),
                       replacing=_current_session()), str(get_locale()))
    except (InvalidEmailCode, InvalidBody) as error:
        add_error(form.code, error.detail)
        return _code_page(form, error.status)
    except EmailTaken as error:
        add_error(form.code, f"{error.detail} Sign in instead, or reset your password.")
        return _code_page(form, 409)
    browser.answer(outcome, None)  # this browser holds the new account's session
    return redirect(url_for(".passkey_signup_create"))


def _current_session() -> AuthSession | None:
    signed_in = browser.current()
    return signed_in.auth_session if signed_in else None


@bp.get("/signup/passkey/create")
@login_required
def passkey_signup_create() -> Page:
    signed_in = browser.current()
    assert signed_in is not None
    if passkeys.of(signed_in.user):
        return redirect(url_for(".account"))
    offered = passkey_form(PasskeyAddForm)
    # `passkey_form` loads static/passkeys.js (base.html).
    body = render_template(TEMPLATE, create_form=offered, passkey_form=offered,
                           email=signed_in.user.email)
    return body, 200, with_own_script({}) if offered else {}
