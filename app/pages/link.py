"""The page a provider sign-in stops at when its verified address is an existing account whose
password may be someone else's (identities.AccountNeedsProof): prove the password to link the
provider, or continue with the provider alone, which removes the password and ends every session
(the way Keycloak's first broker login asks)."""

from __future__ import annotations

from flask import Response, render_template

from app.api import oauth, oauth_state, ratelimits
from app.api.shaping import client_info
from app.domain import identities, throttle
from app.domain.errors import InvalidCredentials, ProviderSignInRefused, RateLimited
from app.pages import bp, browser, duration
from app.pages.forms import ActionForm, LinkPasswordForm


def _render(form: LinkPasswordForm | None = None, status: int = 200) -> tuple[str, int]:
    pending = oauth_state.peek_link()
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
    pending = oauth_state.peek_link()
    form = LinkPasswordForm()
    if not form.validate_on_submit():
        return _render(form, 422)
    try:
        user = identities.link_with_password(
            pending.user_id, pending.profile, form.password.data, client_info(),
            throttle.browser_device(browser.device_cookie()))
    except InvalidCredentials as error:
        form.password.errors.append(error.detail)
        return _render(form, 401)
    except RateLimited as error:
        form.password.errors.append(f"Too many failed attempts. Try again in "
                                    f"{duration(error.retry_after)}.")
        body, status = _render(form, error.status)
        return body, status, {"Retry-After": str(error.retry_after)}
    except ProviderSignInRefused as refused:
        oauth_state.drop_link()
        return oauth.refuse(pending, refused)
    oauth_state.drop_link()
    return oauth.finish(pending.mode, pending.target, user, pending.provider)


@bp.post("/login/link/take-over")
def link_account_taking_over() -> Response | tuple[str, int]:
    pending = oauth_state.peek_link()
    if not ActionForm().validate_on_submit():
        return _render(status=400)
    try:
        user = identities.link_taking_over(pending.user_id, pending.profile, client_info())
    except ProviderSignInRefused as refused:
        oauth_state.drop_link()
        return oauth.refuse(pending, refused)
    oauth_state.drop_link()
    return oauth.finish(pending.mode, pending.target, user, pending.provider)
