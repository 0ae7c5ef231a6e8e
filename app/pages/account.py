"""The account page: who you are, your password, your providers and your signed-in devices."""

from __future__ import annotations

from uuid import UUID

from flask import abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from app.domain.accounts import accounts, identities, plans, providers, recovery
from app.domain.accounts.errors import InvalidCredentials, refusal_notice
from app.domain.clients import sites
from app.domain.errors import AuthError, InvalidBody
from app.domain.factors import passkeys, second_factors, step_up
from app.domain.factors.errors import InvalidSecondFactor, StepUpRequired
from app.domain.sessions import sessions
from app.pages.blueprint import bp
from app.pages.forms import (
    ActionForm,
    ChangePasswordForm,
    EmailChangeForm,
    LeaveForm,
    NameForm,
    PasskeyAddForm,
    SetPasswordForm,
    StepUpForm,
    add_error,
    field_errors,
    passkey_form,
    required_text,
)
from app.web import browser, provider_flow, ratelimits
from app.web.browser import login_required
from app.web.client import client_info
from app.web.headers import with_own_script


def _signed_in() -> browser.BrowserUser:
    signed_in = browser.current()
    assert signed_in is not None  # @login_required ran first
    return signed_in


def _render(password_form: ChangePasswordForm | None = None, status: int = 200,
            name_form: NameForm | None = None) -> tuple[str, int, dict[str, str]]:
    signed_in = _signed_in()
    user = signed_in.user
    linked = identities.providers_of(user.id)
    offered = passkey_form(PasskeyAddForm)
    own_passkeys = passkeys.of(user)
    # An account without a password proves its owner with one of its passkeys instead.
    owner_passkey = bool(offered and user.password_hash is None
                         and any(p.signs_in_alone for p in own_passkeys))
    if request.args.get("linked") in linked:
        flash(_("%(provider)s is now linked.",
                provider=providers.DISPLAY_NAMES[request.args['linked']]))
    return render_template(
        "pages/account.html", user=user, this_session=signed_in.auth_session.id,
        sessions=sessions.live_sessions(user.id), linked=linked,
        site_names={site.name: site.display_name for site in sites.all_sites().values()},
        linkable=[p for p in providers.enabled_providers() if p not in linked],
        password_form=password_form or ChangePasswordForm(), action=ActionForm(),
        name_form=name_form or NameForm(formdata=None, full_name=user.full_name),
        notice=refusal_notice(request.args.get("error")),
        second_factor=second_factors.summary(user), step_up=StepUpForm(),
        recent_sign_in=step_up.recently_signed_in(signed_in.auth_session),
        passkeys=own_passkeys, passkey_form=offered, owner_passkey=owner_passkey,
        email_form=EmailChangeForm(formdata=None), leave_form=LeaveForm(formdata=None),
        plan_name=plans.display_name, site=sites.family_site(request.args.get("site")),
        set_password_form=SetPasswordForm(formdata=None),
    ), status, with_own_script({}) if offered else {}


@bp.get("/account")
@login_required
def account() -> tuple[str, int, dict[str, str]]:
    return _render()


@bp.post("/account/name")
@login_required
@ratelimits.change_name
def change_name() -> Response | tuple[str, int, dict[str, str]]:
    form = NameForm()
    if not form.validate_on_submit():
        return _render(status=422, name_form=form)
    try:
        accounts.change_own_name(_signed_in().user, form.full_name.data or "", client_info())
    except InvalidBody as error:
        field_errors(form, error)
        return _render(status=422, name_form=form)
    flash(_("Name changed."))
    return redirect(url_for(".account"))


@bp.post("/account/password")
@login_required
@ratelimits.change_password
def change_password() -> Response | tuple[str, int, dict[str, str]]:
    form = ChangePasswordForm()
    signed_in = _signed_in()
    if not form.validate_on_submit():
        return _render(form, 422)
    try:
        accounts.change_password(signed_in.user, required_text(form.current_password),
                                 required_text(form.new_password), client_info(),
                                 keep_session=signed_in.auth_session.id,
                                 code=form.second_factor_code.data or None)
    except InvalidCredentials as error:
        add_error(form.current_password, error.detail)
        return _render(form, 401)
    except (StepUpRequired, InvalidSecondFactor) as error:
        add_error(form.second_factor_code,
                  _("Enter a code of your second factor to change the password.")
                  if isinstance(error, StepUpRequired) else error.detail)
        return _render(form, error.status)
    except InvalidBody as error:
        field_errors(form, error)
        return _render(form, 422)
    flash(_("Password changed. Your other devices are signed out."))
    return redirect(url_for(".account"))


@bp.post("/account/confirm-email")
@login_required
@ratelimits.resend_my_confirmation
def resend_confirmation() -> Response:
    # Also for a confirmed address whose password is not yet shown to be its holder's: the link,
    # opened in this browser, shows it (second factors need that).
    recovery.request_confirmation(_signed_in().user.email, client_info(), proving_password=True)
    flash(_("We sent you a new confirmation link. Open it in this browser."))
    return redirect(url_for(".account"))


@bp.post("/account/link/<provider:provider>")
@login_required
def link_provider(provider: str) -> Response:
    providers.check_enabled(provider)
    signed_in = _signed_in()
    try:
        identities.check_may_link(signed_in.user, signed_in.auth_session)
    except AuthError as refused:
        return redirect(url_for(".account", error=refused.code))
    return provider_flow.start(provider, "link", None, user_id=signed_in.user.id)


@bp.post("/account/unlink/<provider:provider>")
@login_required
def unlink_provider(provider: str) -> Response:
    try:
        identities.unlink(_signed_in().user.id, provider, client_info())
    except AuthError as error:
        flash(error.detail)
    else:
        flash(_("%(provider)s is no longer linked.",
                provider=providers.DISPLAY_NAMES.get(provider, provider)))
    return redirect(url_for(".account"))


@bp.post("/account/sessions/<uuid:session_id>/end")  # an id, or no route (never a NUL)
@login_required
def end_session(session_id: UUID) -> Response:
    signed_in = _signed_in()
    target = sessions.own_live_session(str(session_id), signed_in.user.id)
    if target is None:
        abort(404)
    if target.id == signed_in.auth_session.id:
        browser.sign_out()
        return redirect(url_for(".login_form"))
    sessions.log_out(target.id, target.user_id, sessions.LogoutScope.LOCAL, client_info())
    flash(_("That device is signed out."))
    return redirect(url_for(".account"))


@bp.post("/account/sessions/end-others")
@login_required
def end_other_sessions() -> Response:
    signed_in = _signed_in()
    sessions.log_out(signed_in.auth_session.id, signed_in.user.id, sessions.LogoutScope.OTHERS,
                     client_info())
    flash(_("Every other device is signed out."))
    return redirect(url_for(".account"))
