"""Passkeys on the hosted pages: adding and removing them from the account page, signing in with
one alone from the login page, and one as the second step (domain: app/domain/factors/passkeys.py).

Each ceremony is two requests made by static/passkeys.js: a POST for its options (JSON, with the
form's CSRF token in X-CSRFToken), then the form itself, with the browser's answer in its
`credential` field. Without script the passkey forms stay hidden; nothing else needs them.
"""

from __future__ import annotations

from uuid import UUID

from flask import flash, jsonify, redirect, render_template, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.errors import AuthError, RateLimited
from app.domain.factors import passkeys
from app.domain.factors.errors import (
    InvalidMfaToken,
    InvalidPasskey,
    InvalidSecondFactor,
    StepUpRequired,
)
from app.domain.factors.second_factors import Purpose
from app.domain.sessions.errors import EmailNotConfirmed
from app.domain.text import N_
from app.pages.account import _signed_in
from app.pages.auth import login_page
from app.pages.blueprint import bp, refusal, too_many, words
from app.pages.forms import LoginForm, PasskeyAddForm, PasskeyAnswerForm, required_text
from app.pages.second_factor import (
    STEP_UP_ADVICE,
    behind_step_up,
    complete_second_step,
    held_second_step,
    refused,
    second_step_page,
)
from app.web import browser, ratelimits, targets
from app.web.browser import login_required
from app.web.client import client_info

Page = str | tuple[str, int] | tuple[str, int, dict[str, str]] | Response


def _json(options_json: str) -> Response:
    """A ceremony's options, never cached."""
    return Response(options_json, mimetype="application/json",
                    headers={"Cache-Control": "no-store"})


def _json_refusal(error: AuthError) -> tuple[Response, int]:
    """What the script shows in place of the browser's prompt."""
    detail = str(STEP_UP_ADVICE) if isinstance(error, StepUpRequired) else words(error.detail)
    return jsonify(error=detail), error.status


# The account page ------------------------------------------------------------------------------

@bp.post("/account/passkeys/options")
@login_required
@ratelimits.passkey_options
def passkey_registration_options() -> Response | tuple[Response, int]:
    signed_in = _signed_in()
    try:
        return _json(passkeys.registration_options(signed_in.user, signed_in.auth_session))
    except AuthError as error:
        return _json_refusal(error)


@bp.post("/account/passkeys")
@login_required
@ratelimits.passkey
def passkey_add() -> Page:
    signed_in = _signed_in()
    form = PasskeyAddForm()
    if not form.validate_on_submit():
        flash(_("The passkey could not be added: try again."))
        return redirect(url_for(".account", _anchor="passkeys"))
    try:
        added = passkeys.register(signed_in.user, signed_in.auth_session,
                                  required_text(form.credential), form.name.data or "",
                                  client_info())
    except AuthError as error:
        return refused(error)
    if added.recovery_codes:
        return render_template("pages/recovery_codes.html", codes=added.recovery_codes,
                               enrolled="passkey")
    flash(_("Passkey “%(name)s” added.", name=added.passkey.name))
    return redirect(url_for(".account", _anchor="passkeys"))


@bp.post("/account/passkeys/<uuid:passkey_id>/remove")  # an id, or no route (never a NUL)
@login_required
@ratelimits.second_factor
def passkey_remove(passkey_id: UUID) -> Response:
    removed = behind_step_up(lambda signed_in, code: passkeys.remove(
        signed_in.user, signed_in.auth_session, str(passkey_id), code, client_info()))
    if isinstance(removed, Response):
        return removed
    flash(_("Passkey “%(name)s” removed.", name=removed.name))
    return redirect(url_for(".account", _anchor="passkeys"))


# Signing in with a passkey alone ---------------------------------------------------------------

@bp.post("/login/passkey/options")
@ratelimits.passkey_options
def passkey_sign_in_options() -> Response:
    return _json(passkeys.sign_in_options())


@bp.post("/login/passkey")
@ratelimits.passkey
def passkey_sign_in() -> Page:
    target = targets.from_request(required=False)
    form = PasskeyAnswerForm()
    if not form.validate_on_submit():
        return _login_refused(target, InvalidPasskey())
    try:
        outcome = sign_in.with_passkey(required_text(form.credential), browser.here(target))
    except (InvalidPasskey, EmailNotConfirmed) as error:
        return _login_refused(target, error)
    return browser.answer(outcome, target)


def _login_refused(target: targets.Target | None, error: AuthError) -> Page:
    form = LoginForm()
    form.form_errors.append(error.detail)
    return login_page(target, error.status, form, captcha_email=None)


# A passkey as the second step ------------------------------------------------------------------

@bp.post("/login/second-factor/passkey/options")
@ratelimits.passkey_options
def passkey_second_step_options() -> Response | tuple[Response, int]:
    try:
        return _json(passkeys.second_step_options(held_second_step(), Purpose.HOSTED))
    except InvalidMfaToken:
        return _json_refusal(InvalidPasskey(N_("This sign-in has expired. Start again.")))
    except AuthError as error:
        return _json_refusal(error)


@bp.post("/login/second-factor/passkey")
@ratelimits.passkey
def passkey_second_step() -> Page:
    held_second_step()
    form = PasskeyAnswerForm()
    if not form.validate_on_submit():
        return second_step_page(None, 422, _("That passkey could not sign you in. Try again."))
    try:
        return complete_second_step(sign_in.PasskeyProof(required_text(form.credential)))
    except InvalidSecondFactor:
        return second_step_page(None, 401, _("That passkey could not sign you in. Try again, "
                                             "or enter a code."))
    except RateLimited as error:
        wait = too_many(_("Too many attempts."), error.retry_after)
        return refusal(error, second_step_page(None, error.status, wait))
