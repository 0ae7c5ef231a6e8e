"""The page a provider sign-in stops at when its verified address is an existing account whose
password may be someone else's (errors.AccountNeedsProof): prove the password to link the
provider, or continue with the provider alone, which removes the password and ends every session
(the way Keycloak's first broker login asks)."""

from __future__ import annotations

from flask import render_template
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from app.domain import sign_in
from app.domain.accounts.errors import InvalidCredentials, ProviderSignInRefused
from app.domain.errors import RateLimited
from app.domain.limits import throttle
from app.pages.blueprint import bp, refusal, too_many
from app.pages.forms import ActionForm, LinkPasswordForm, add_error, required_text
from app.web import browser, provider_flow, provider_state, ratelimits


def _render(form: LinkPasswordForm | None = None, status: int = 200) -> tuple[str, int]:
    pending = provider_state.peek_link()
    # The account's address exactly as stored (canonical), so a look-alike shows for what it is.
    return render_template("pages/link_account.html", email=pending.email,
                           provider=pending.provider, form=form or LinkPasswordForm(),
                           action=ActionForm()), status


@bp.get("/login/link")
def link_account_form() -> tuple[str, int]:
    return _render()


@bp.post("/login/link")
@ratelimits.link_proof
def link_account_with_password() -> Response | tuple[str, int] | tuple[str, int, dict[str, str]]:
    pending = provider_state.peek_link()
    form = LinkPasswordForm()
    if not form.validate_on_submit():
        return _render(form, 422)
    try:
        outcome = sign_in.link_with_password(
            pending.user_id, pending.profile, required_text(form.password),
            throttle.browser_device(browser.device_cookie()),
            provider_flow.sign_in_for(pending.mode, pending.target))
    except InvalidCredentials as error:
        add_error(form.password, error.detail)
        return _render(form, 401)
    except RateLimited as error:
        add_error(form.password, too_many(_("Too many failed attempts."), error.retry_after))
        return refusal(error, _render(form, error.status))
    except ProviderSignInRefused as refused:
        provider_state.drop_link()
        return provider_flow.refuse(pending, refused)
    provider_state.drop_link()
    return browser.answer(outcome, pending.target)


@bp.post("/login/link/take-over")
def link_account_taking_over() -> Response | tuple[str, int]:
    pending = provider_state.peek_link()
    if not ActionForm().validate_on_submit():
        return _render(status=400)
    try:
        outcome = sign_in.link_taking_over(pending.user_id, pending.profile,
                                           provider_flow.sign_in_for(pending.mode,
                                                                     pending.target))
    except ProviderSignInRefused as refused:
        provider_state.drop_link()
        return provider_flow.refuse(pending, refused)
    provider_state.drop_link()
    return browser.answer(outcome, pending.target)
