"""Second factors on the hosted pages: enrolling an authenticator app and the recovery codes
from the account page (domain: factors/enrolment.py), and the second step of a sign-in
(factors/pending.py, domain/sign_in.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import segno
from flask import flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.errors import AuthError, NotFound, RateLimited
from app.domain.factors import enrolment, pending, second_factors
from app.domain.factors.errors import (
    AlreadyEnrolled,
    FactorNeedsConfirmedEmail,
    FactorNeedsProvedPassword,
    InvalidMfaToken,
    InvalidSecondFactor,
    LastSignInMethod,
    NotEnrolled,
    StepUpRequired,
)
from app.domain.factors.second_factors import Purpose
from app.pages.account import _signed_in
from app.pages.blueprint import bp, refusal, too_many
from app.pages.forms import (
    PasskeyAnswerForm,
    SecondFactorForm,
    StepUpForm,
    TotpSetupForm,
    add_error,
    passkey_form,
    required_text,
)
from app.web import browser, ratelimits, targets
from app.web.browser import login_required
from app.web.client import client_info
from app.web.headers import with_own_script

T = TypeVar("T")
Page = str | tuple[str, int] | tuple[str, int, dict[str, str]] | Response
STEP_UP_ADVICE = _l("For this, sign in again first, or enter a code of your second factor "
                    "(if you have one).")


def refused(error: AuthError) -> Response:
    """Back to the account page's second factors, saying why not."""
    if isinstance(error, RateLimited):
        flash(too_many(_("Too many wrong codes."), error.retry_after))
    elif isinstance(error, StepUpRequired):
        flash(str(STEP_UP_ADVICE))
    else:
        flash(error.detail)
    return redirect(url_for(".account", _anchor="second-factor"))


def behind_step_up(change: Callable[[browser.BrowserUser, str | None], T]) -> T | Response:
    """Run `change` (to how the account signs in) with the step-up form's code, if any: the
    domain asks for it unless the sign-in is recent. A refusal goes back to the account page."""
    form = StepUpForm()
    if not form.validate_on_submit():
        return redirect(url_for(".account"))
    try:
        return change(_signed_in(), form.code.data or None)
    except (NotFound, NotEnrolled, StepUpRequired, InvalidSecondFactor, RateLimited,
            LastSignInMethod) as error:
        return refused(error)


def _qr_code(uri: str) -> str:
    """The key as a QR code, drawn here as inline SVG: no script, no image service."""
    return segno.make(uri, error="m").svg_inline(scale=5, border=2, title="QR code of the key",
                                                 svgclass="qr", lineclass=None)


def _grouped(secret: str) -> str:
    return " ".join(secret[i:i + 4] for i in range(0, len(secret), 4))


# Enrolling -------------------------------------------------------------------------------------

@bp.post("/account/totp/start")
@login_required
def totp_start() -> Response:
    signed_in = _signed_in()
    if not StepUpForm().validate_on_submit():
        return redirect(url_for(".account"))
    try:
        enrolment.start_totp(signed_in.user, signed_in.auth_session)
    except (AlreadyEnrolled, FactorNeedsConfirmedEmail, FactorNeedsProvedPassword,
            StepUpRequired) as error:
        return refused(error)
    return redirect(url_for(".totp_setup"))


def _setup_page(form: TotpSetupForm | None = None, status: int = 200) -> Page:
    user = _signed_in().user
    secret = enrolment.pending_secret(user)
    if secret is None:
        return redirect(url_for(".account"))
    uri = enrolment.provisioning_uri(user, secret)
    return render_template("pages/totp_setup.html", form=form or TotpSetupForm(),
                           qr=_qr_code(uri), otpauth=uri, key=_grouped(secret)), status


@bp.get("/account/totp")
@login_required
def totp_setup() -> Page:
    return _setup_page()


@bp.post("/account/totp")
@login_required
@ratelimits.second_factor
def totp_confirm() -> Page:
    signed_in = _signed_in()
    form = TotpSetupForm()
    if not form.validate_on_submit():
        return _setup_page(form, 422)
    try:
        codes = enrolment.confirm_totp(signed_in.user, required_text(form.code), client_info(),
                                       signed_in.auth_session)
    except InvalidSecondFactor:
        add_error(form.code, _("That code is not right. Enter the code the app shows now."))
        return _setup_page(form, 401)
    except (NotEnrolled, StepUpRequired, RateLimited) as error:
        return refused(error)
    if not codes:  # the account's passkeys came first, and their recovery codes with them
        flash(_("The authenticator app is set up. Your recovery codes stay as they were."))
        return redirect(url_for(".account", _anchor="second-factor"))
    return render_template("pages/recovery_codes.html", codes=codes, enrolled=True)


@bp.post("/account/totp/remove")
@login_required
@ratelimits.second_factor
def totp_remove() -> Response:
    refusal = behind_step_up(lambda signed_in, code: enrolment.remove_totp(
        signed_in.user, client_info(), signed_in.auth_session, code))
    if refusal is not None:
        return refusal
    flash(_("The authenticator app is removed: signing in no longer asks for a code."))
    return redirect(url_for(".account"))


@bp.post("/account/recovery-codes")
@login_required
@ratelimits.second_factor
def recovery_codes_regenerate() -> Page:
    codes = behind_step_up(lambda signed_in, code: enrolment.regenerate_recovery_codes(
        signed_in.user, client_info(), signed_in.auth_session, code))
    if isinstance(codes, Response):
        return codes
    return render_template("pages/recovery_codes.html", codes=codes, enrolled=False)


# The second step of a sign-in ------------------------------------------------------------------

def held_second_step() -> str:
    """The token of the pending sign-in this browser holds for the request's target."""
    held = browser.held_second_step(targets.from_request(required=False))
    if held is None:
        raise InvalidMfaToken()
    return held


def complete_second_step(proof: sign_in.Proof) -> Response:
    """Complete this browser's pending sign-in with `proof`, and go where it goes."""
    signed_in = browser.current()
    opened = sign_in.complete_second_step(
        held_second_step(), client_info(), proof,
        replacing=signed_in.auth_session if signed_in else None)
    browser.drop_second_step()
    return browser.answer(opened, targets.from_request(required=False))


def second_step_page(form: SecondFactorForm | None, status: int = 200,
                     passkey_error: str | None = None) -> tuple[str, int, dict[str, str]]:
    """The second step: a code, or one of the account's passkeys (our own script does that)."""
    target = targets.from_request(required=False)
    user = pending.pending_user(held_second_step(), Purpose.HOSTED)
    offered = passkey_form(PasskeyAnswerForm) if second_factors.has_passkey(user) else None
    body = render_template("pages/second_step.html", form=form or SecondFactorForm(),
                           email=user.email, carry=target.query() if target else {},
                           methods=second_factors.methods(user),
                           passkey_form=offered, passkey_error=passkey_error)
    return body, status, with_own_script({}) if offered else {}


@bp.get("/login/second-factor")
def second_step_form() -> Page:
    return second_step_page(SecondFactorForm())


@bp.post("/login/second-factor")
@ratelimits.second_factor
def second_step_submit() -> Page:
    held_second_step()
    form = SecondFactorForm()
    if not form.validate_on_submit():
        return second_step_page(form, 422)
    try:
        return complete_second_step(sign_in.CodeProof(required_text(form.code)))
    except InvalidSecondFactor:
        add_error(form.code, _("That code is not right, or was already used."))
        return second_step_page(form, 401)
    except RateLimited as error:
        add_error(form.code, too_many(_("Too many wrong codes."), error.retry_after))
        return refusal(error, second_step_page(form, error.status))
