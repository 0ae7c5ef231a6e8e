"""Sign-in through Google and GitHub: the starts (v1 and v2) and the provider's callback.

These are browser-facing GETs: errors are an HTML page for a browser and a problem body for
anything else, and never a redirect, unless a verified pending sign-in says where to go.
"""

from __future__ import annotations

import time

from flask import Blueprint, Response, current_app, redirect, render_template, request, url_for

from app import targets
from app.api import oauth_state
from app.api.oauth_state import Mode, PendingLink, PendingSignIn
from app.api.problems import problem, register_api_errors
from app.api.shaping import client_info
from app.domain import handoff, identities, providers
from app.domain.errors import (
    AccountNeedsProof,
    AuthError,
    InvalidState,
    ProviderFailed,
    ProviderSignInRefused,
)
from app.domain.providers import Profile
from app.models import User
from app.pages import browser
from app.targets import Target

bp = Blueprint("oauth", __name__, url_prefix="/api")
register_api_errors(bp)


@bp.errorhandler(AuthError)
def _error_page_or_problem(error: AuthError) -> Response | tuple[str, int]:
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html":
        return render_template("errors/auth_error.html", error=error), error.status
    return problem(error.status, error.code, error.detail)


@bp.get("/v2/auth/<provider:provider>")
def start_v2(provider: str) -> Response:
    providers.check_enabled(provider)
    return start(provider, "api", targets.from_request(required=True, accept=("redirect_uri",)))


@bp.get("/v1/auth/<provider:provider>/login")
def start_v1(provider: str) -> Response:
    providers.check_enabled(provider)
    return start(provider, "api", targets.from_request(required=True, accept=("callback",)))


def start(provider: str, mode: Mode, target: Target | None, user_id: str | None = None) -> Response:
    """Send the browser to the provider, remembering in this browser how to finish."""
    authorization = providers.authorization(provider, _callback_url(provider))
    oauth_state.save(authorization.state, PendingSignIn(
        provider=provider, mode=mode, redirect_uri=target.redirect_uri if target else None,
        client_state=target.state if target else None,
        code_challenge=target.code_challenge if target else None,
        code_verifier=authorization.code_verifier, nonce=authorization.nonce,
        started_at=time.time(), user_id=user_id))
    return redirect(authorization.url)


@bp.get("/v2/auth/<provider:provider>/callback")
def callback(provider: str) -> Response:
    pending = oauth_state.take(request.args.get("state"))
    if pending.provider != provider:
        raise InvalidState()
    try:
        if "error" in request.args:
            declined = request.args["error"] == "access_denied"
            raise ProviderSignInRefused() if declined else ProviderFailed()
        code = request.args.get("code")
        if not code:
            raise ProviderFailed()
        profile = providers.profile(provider, _callback_url(provider), code,
                                    pending.code_verifier, pending.nonce)
        return _FINISH[pending.mode](pending, profile)
    except ProviderSignInRefused as refused:
        return refuse(pending, refused)


def _callback_url(provider: str) -> str:
    return f"{current_app.config['PUBLIC_URL']}/api/v2/auth/{provider}/callback"


# How each mode finishes ------------------------------------------------------------------------

def _finish_sign_in(pending: PendingSignIn, profile: Profile) -> Response:
    try:
        user = identities.user_for(profile, client_info())
    except AccountNeedsProof as needed:  # the hosted pages ask for the password first
        oauth_state.save_link(pending, profile, needed.user_id)
        return redirect(url_for("pages.link_account_form"))
    return finish(pending.mode, pending.target, user, profile.provider)


def finish(mode: Mode, target: Target | None, user: User, provider: str) -> Response:
    """The end of a provider sign-in (api: a code for the site; hosted: this browser is signed
    in too), straight from the callback or after the person proved an existing account."""
    if mode == "api":
        assert target is not None
        code = handoff.issue(user, provider, target.redirect_uri, target.code_challenge)
        return targets.send_back(target, code=code, provider=provider)
    signed_in = browser.sign_in(user, provider)
    return browser.hand_back(signed_in, target) if target else redirect(url_for("pages.account"))


def _finish_link(pending: PendingSignIn, profile: Profile) -> Response:
    signed_in = browser.current()
    if signed_in is None or signed_in.user.id != pending.user_id:
        raise InvalidState()
    identities.link(signed_in.user, profile, client_info())
    return redirect(url_for("pages.account", linked=profile.provider))


def _refuse_api(pending: PendingSignIn, refused: ProviderSignInRefused) -> Response:
    target = pending.target
    assert target is not None
    return targets.send_back(target, error=refused.code)


def _refuse_hosted(pending: PendingSignIn, refused: ProviderSignInRefused) -> Response:
    target = pending.target
    return redirect(url_for("pages.login_form", error=refused.code,
                            **(target.query() if target else {})))


def _refuse_link(pending: PendingSignIn, refused: ProviderSignInRefused) -> Response:
    return redirect(url_for("pages.account", error=refused.code))


_FINISH = {"api": _finish_sign_in, "hosted": _finish_sign_in, "link": _finish_link}
_REFUSE = {"api": _refuse_api, "hosted": _refuse_hosted, "link": _refuse_link}


def refuse(pending: PendingSignIn | PendingLink, refused: ProviderSignInRefused) -> Response:
    """Where a refused provider sign-in goes: the site's callback, the login or account page."""
    current_app.logger.info("provider sign-in refused: %s", refused.code)
    return _REFUSE[pending.mode](pending, refused)  # type: ignore[arg-type]
