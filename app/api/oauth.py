"""Sign-in through Google and GitHub: the starts (v1 and v2) and the provider's callback.

These are browser-facing GETs: errors are an HTML page for a browser and a problem body for
anything else, and never a redirect, unless a verified pending sign-in says where to go.
"""

from __future__ import annotations

import re
import time
from urllib.parse import urlencode, urlsplit, urlunsplit

from flask import Blueprint, Response, current_app, redirect, render_template, request

from app.api import oauth_state
from app.api.oauth_state import PendingSignIn
from app.api.problems import problem, register_api_errors
from app.api.shaping import client_info
from app.domain import handoff, identities, providers, sites
from app.domain.errors import AuthError, InvalidRequest, ProviderFailed, ProviderSignInRefused

bp = Blueprint("oauth", __name__, url_prefix="/api")
register_api_errors(bp)

_CLIENT_STATE = re.compile(r"^[\x21-\x7e]{1,512}$")  # printable ASCII, no spaces


@bp.errorhandler(AuthError)
def _error_page_or_problem(error: AuthError) -> Response | tuple[str, int]:
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html":
        return render_template("errors/auth_error.html", error=error), error.status
    return problem(error.status, error.code, error.detail)


@bp.get("/v2/auth/<provider:provider>")
def start_v2(provider: str) -> Response:
    providers.check_enabled(provider)
    return _start(provider, sites.registered_redirect_uri(request.args.get("redirect_uri")))


@bp.get("/v1/auth/<provider:provider>/login")
def start_v1(provider: str) -> Response:
    providers.check_enabled(provider)
    return _start(provider, sites.callback_redirect_uri(request.args.get("callback")))


def _start(provider: str, redirect_uri: str) -> Response:
    untrusted_state = request.args.get("state")
    if untrusted_state is not None and not _CLIENT_STATE.match(untrusted_state):
        raise InvalidRequest("state must be 1 to 512 printable characters.")
    challenge = handoff.checked_challenge(request.args.get("code_challenge"),
                                          request.args.get("code_challenge_method"))
    authorization = providers.authorization(provider, _callback_url(provider))
    oauth_state.save(authorization.state, PendingSignIn(
        provider=provider, redirect_uri=redirect_uri, client_state=untrusted_state,
        code_challenge=challenge, code_verifier=authorization.code_verifier,
        nonce=authorization.nonce, started_at=time.time()))
    return redirect(authorization.url)


@bp.get("/v2/auth/<provider:provider>/callback")
def callback(provider: str) -> Response:
    pending = oauth_state.take(request.args.get("state"))
    if pending.provider != provider:
        raise oauth_state.InvalidState()
    if "error" in request.args:
        declined = request.args["error"] == "access_denied"
        return _back_to_site(pending, error="access_denied" if declined else "provider_error")
    try:
        code = request.args.get("code")
        if not code:
            raise ProviderFailed()
        profile = providers.profile(provider, _callback_url(provider), code,
                                    pending.code_verifier, pending.nonce)
        user = identities.user_for(profile, client_info())
        handoff_code = handoff.issue(user, provider, pending.redirect_uri, pending.code_challenge)
    except ProviderSignInRefused as refused:
        current_app.logger.info("provider sign-in refused: %s", refused.code)
        return _back_to_site(pending, error=refused.code)
    return _back_to_site(pending, code=handoff_code, provider=provider)


def _callback_url(provider: str) -> str:
    return f"{current_app.config['PUBLIC_URL']}/api/v2/auth/{provider}/callback"


def _back_to_site(pending: PendingSignIn, **params: str) -> Response:
    if pending.client_state is not None:
        params["state"] = pending.client_state
    parts = urlsplit(pending.redirect_uri)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    response = redirect(urlunsplit(parts._replace(query=query)))
    response.headers["Cache-Control"] = "no-store"
    return response
