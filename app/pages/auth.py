"""Sign-in, sign-up, provider sign-in, recovery, confirmation and sign-out pages."""

from __future__ import annotations

from typing import Any

from flask import redirect, render_template, request, session, url_for
from flask_babel import gettext as _
from flask_login import current_user
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.accounts import accounts, providers, recovery
from app.domain.accounts.errors import (
    EmailTaken,
    InvalidConfirmationToken,
    InvalidCredentials,
    InvalidResetToken,
    refusal_notice,
)
from app.domain.clients import sites
from app.domain.clients.sites import Site
from app.domain.errors import AuthError, InvalidBody, RateLimited
from app.domain.limits import throttle
from app.domain.limits.captcha_errors import CaptchaProblem, CaptchaUnavailable
from app.domain.sessions.errors import EmailNotConfirmed
from app.infra.settings import settings
from app.pages import email_code
from app.pages.blueprint import bp, duration, mail_captcha_refusal, refusal, too_many
from app.pages.forms import (
    ForgotPasswordForm,
    LoginForm,
    MailedLinkForm,
    PasskeyAnswerForm,
    ResetPasswordForm,
    SignupForm,
    add_error,
    field_errors,
    passkey_form,
    required_text,
)
from app.web import browser, captcha, locale, provider_flow, ratelimits, targets
from app.web.client import client_info
from app.web.headers import with_own_script
from app.web.targets import Target

Page = str | tuple[str, int] | tuple[str, int, dict[str, str]] | Response


def _carry(target: Target | None) -> dict[str, str]:
    return target.query() if target else {}


def _page(template: str, target: Target | None, status: int = 200,
          **context: object) -> tuple[str, int]:
    return render_template(template, carry=_carry(target),
                           providers=providers.enabled_providers(), **context), status


def _captcha_page(template: str, target: Target | None, status: int,
                  widget: captcha.Widget | None, **context: object) -> Page:
    """A page that may show the captcha widget, with the CSP the widget needs (if shown)."""
    body, status = _page(template, target, status, captcha=widget, **context)
    return body, status, captcha.page_headers(widget)


def login_page(target: Target | None, status: int, form: LoginForm, *,
               captcha_email: str | None, **context: object) -> Page:
    """The sign-in form, with the widget when the next attempt for `captcha_email` will be asked
    for a captcha, and the passkey button (our own script: static/passkeys.js)."""
    shown = captcha.login_widget(captcha_email)
    offered = passkey_form(PasskeyAnswerForm)
    body, status = _page("pages/login.html", target, status, captcha=shown, form=form,
                         passkey_form=offered, email_code=email_code.offered(target), **context)
    headers = captcha.page_headers(shown)
    return body, status, with_own_script(headers) if offered else headers


def _site_of(target: Target | None) -> str | None:
    """The registered name of the site a target returns to: all of it that travels by mail."""
    site = sites.site_of_redirect_uri(target.redirect_uri) if target else None
    return site.name if site else None


def _site_query(site: Site | None) -> dict[str, Any]:
    return {"site": site.name} if site else {}


def _reset_page(template: str, site: Site | None, status: int = 200, **context: object) -> Page:
    """The pages a reset mail leads to carry a registered site's name, nothing else: after the
    reset the person goes back to the site, which starts a sign-in with its own state."""
    return render_template(template, carry=_site_query(site), site=site, **context), status


# Sign-in -------------------------------------------------------------------------------------

def _issues_no_code() -> bool:
    """GET /login hands a code to a client site only for a browser already signed in."""
    return (not current_user.is_authenticated or request.args.get("prompt") == "login"
            or not {"redirect_uri", "callback"} & request.args.keys())


@bp.get("/login")
@ratelimits.single_sign_on(exempt_when=_issues_no_code)
def login_form() -> Page:
    target = targets.from_request(required=False)
    signed_in = browser.current()
    if signed_in is not None and request.args.get("prompt") != "login":
        # Single sign-on: straight back, nothing to type.
        return browser.hand_back(signed_in, target) if target else redirect(url_for(".account"))
    notice = refusal_notice(request.args.get("error"))
    # An OpenID Connect client's `login_hint` (app/oidc): the address to offer, nothing more.
    untrusted_hint = request.args.get("login_hint", "")[:254]
    return login_page(target, 200, LoginForm(data={"email": untrusted_hint}),
                      captcha_email=None, notice=notice)


@bp.post("/login")
@ratelimits.login
def login_submit() -> Page:
    target = targets.from_request(required=False)
    form = LoginForm()
    if not form.validate_on_submit():
        return login_page(target, 422, form, captcha_email=form.email.data)
    try:
        with captcha.login_guard(required_text(form.email), captcha.form_token()):
            user = accounts.authenticate(required_text(form.email), required_text(form.password),
                                         client_info(),
                                         throttle.browser_device(browser.device_cookie()))
        browser.keep_signed_in(bool(form.keep.data))
        return browser.answer(browser.here(target).finish(user, "password"), target)
    except CaptchaProblem as problem:
        form.form_errors.append(captcha.PAGE_WORDS[problem.code])
        return login_page(target, problem.status, form, captcha_email=form.email.data)
    except (InvalidCredentials, EmailNotConfirmed) as error:
        form.form_errors.append(error.detail)
        return login_page(target, error.status, form, captcha_email=form.email.data)
    except RateLimited as error:
        form.form_errors.append(too_many(_("Too many failed sign-ins."), error.retry_after,
                                         or_reset=True))
        return refusal(error, login_page(target, error.status, form,
                                         captcha_email=form.email.data))


@bp.get("/login/<provider:provider>")
def provider_login(provider: str) -> Response:
    providers.check_enabled(provider)
    return provider_flow.start(provider, "hosted", targets.from_request(required=False))


# Sign-up -------------------------------------------------------------------------------------

@bp.get("/signup")
def signup_form() -> Page:
    return _captcha_page("pages/signup.html", targets.from_request(required=False), 200,
                         captcha.widget(), form=SignupForm())


@bp.post("/signup")
@ratelimits.signup
def signup_submit() -> Page:
    target = targets.from_request(required=False)
    form = SignupForm()
    widget = captcha.widget()
    if not form.validate_on_submit():
        return _captcha_page("pages/signup.html", target, 422, widget, form=form)
    try:
        captcha.check_signup(required_text(form.email), required_text(form.password),
                             captcha.form_token())
    except CaptchaUnavailable as error:
        return refusal(error)
    except CaptchaProblem as problem:
        form.form_errors.append(captcha.PAGE_WORDS[problem.code])
        return _captcha_page("pages/signup.html", target, problem.status, widget, form=form)
    except InvalidBody as error:
        field_errors(form, error)
        return _captcha_page("pages/signup.html", target, 422, widget, form=form)
    try:
        user, outcome = sign_in.sign_up(required_text(form.email), required_text(form.password),
                                        form.full_name.data or "", browser.here(target),
                                        language=locale.select())
    except EmailTaken as error:
        add_error(form.email, f"{error.detail} Sign in instead, or reset your password.")
        return _captcha_page("pages/signup.html", target, 409, widget, form=form)
    except InvalidBody as error:
        field_errors(form, error)
        return _captcha_page("pages/signup.html", target, 422, widget, form=form)
    if outcome is None:  # no session before the address is confirmed
        return _page("pages/confirm_sent.html", target, 201, email=user.email)
    return browser.answer(outcome, target)


# Recovery ------------------------------------------------------------------------------------

@bp.get("/forgot-password")
def forgot_form() -> Page:
    return _captcha_page("pages/forgot_password.html", targets.from_request(required=False), 200,
                         captcha.widget(), form=ForgotPasswordForm())


@bp.post("/forgot-password")
@ratelimits.forgot
def forgot_submit() -> Page:
    target = targets.from_request(required=False)
    form = ForgotPasswordForm()
    widget = captcha.widget()
    if not form.validate_on_submit():
        return _captcha_page("pages/forgot_password.html", target, 422, widget, form=form)
    refused = mail_captcha_refusal(captcha.FORGOT_PASSWORD, form, lambda status: _captcha_page(
        "pages/forgot_password.html", target, status, widget, form=form))
    if refused is not None:
        return refused
    recovery.request_reset(required_text(form.email), client_info(), _site_of(target))
    return _page("pages/forgot_sent.html", target, 202, email=required_text(form.email),
                 lasts=duration(settings().reset_token_ttl))


RESET_TOKEN_KEY = "svc_reset_token"  # noqa: S105 (a session key)


@bp.get("/reset-password")
def reset_form() -> Page:
    site = sites.family_site(request.args.get("site"))  # an unknown name is dropped
    if "token" in request.args:
        # Move the token from the address bar into the session cookie, so it is in no history,
        # log or Referer from here on.
        session[RESET_TOKEN_KEY] = request.args["token"]
        return redirect(url_for(".reset_form", **_site_query(site)))
    token = session.get(RESET_TOKEN_KEY)
    if not token or not recovery.reset_token_is_live(token):
        raise InvalidResetToken()
    return _reset_page("pages/reset_password.html", site, form=ResetPasswordForm())


@bp.post("/reset-password")
@ratelimits.reset
def reset_submit() -> Page:
    site = sites.family_site(request.args.get("site"))
    form = ResetPasswordForm()
    if not form.validate_on_submit():
        return _reset_page("pages/reset_password.html", site, 422, form=form)
    try:
        recovery.reset_password(session.get(RESET_TOKEN_KEY, ""), required_text(form.new_password),
                                client_info())
    except InvalidBody as error:
        field_errors(form, error)
        return _reset_page("pages/reset_password.html", site, 422, form=form)
    session.pop(RESET_TOKEN_KEY, None)
    browser.sign_out()  # every session ended, this browser's too: sign in with the new password
    return _reset_page("pages/reset_done.html", site)


@bp.get("/confirm-email")
def confirm_email_form() -> Page:
    """The mailed link's page: a button, and nothing confirmed (a mail scanner that follows
    the link confirms no address for whoever signed up with it)."""
    form = MailedLinkForm(token=request.args.get("token", ""))
    if not recovery.confirmation_is_live(form.token.data or ""):
        error = InvalidConfirmationToken()
        return _page("pages/confirm_email.html", None, error.status, error=error)
    return _page("pages/confirm_email.html", None, form=form)


@bp.post("/confirm-email")
def confirm_email() -> Page:
    form = MailedLinkForm()
    try:
        if not form.validate_on_submit():
            raise InvalidConfirmationToken()
        signed_in = browser.current()
        user = recovery.confirm_email(form.token.data or "", client_info(),
                                      signed_in.user.id if signed_in else None)
    except AuthError as error:
        return _page("pages/confirm_email.html", None, error.status, error=error)
    return _page("pages/confirm_email.html", None, email=user.email)
