"""Sign-in through Google and GitHub: the API's starts (v1 and v2) and the provider's callback,
which every mode comes back to (the flow itself: app/web/provider_flow.py).

These are browser-facing GETs: errors are an HTML page for a browser and a problem body for
anything else, and never a redirect, unless a verified pending sign-in says where to go.
"""

from __future__ import annotations

from flask import render_template, request
from werkzeug.wrappers import Response

from app.domain.accounts import providers
from app.domain.accounts.errors import InvalidState, ProviderFailed, ProviderSignInRefused
from app.domain.errors import AuthError
from app.web import provider_flow, provider_state, targets
from app.web.errors import problem, problem_blueprint

bp = problem_blueprint("oauth", "/api")


@bp.errorhandler(AuthError)
def _error_page_or_problem(error: AuthError) -> Response | tuple[str, int]:
    if request.accept_mimetypes.best_match(["application/json", "text/html"]) == "text/html":
        return render_template("errors/auth_error.html", error=error), error.status
    return problem(error.status, error.code, error.detail)


@bp.get("/v2/auth/<provider:provider>")
def start_v2(provider: str) -> Response:
    providers.check_enabled(provider)
    return provider_flow.start(provider, "api", targets.from_request(
        required=True, accept=("redirect_uri",)))


@bp.get("/v1/auth/<provider:provider>/login")
def start_v1(provider: str) -> Response:
    providers.check_enabled(provider)
    return provider_flow.start(provider, "api", targets.from_request(
        required=True, accept=("callback",)))


@bp.get("/v2/auth/<provider:provider>/callback")
def callback(provider: str) -> Response:
    pending = provider_state.take(request.args.get("state"))
    if pending.provider != provider:
        raise InvalidState()
    try:
        if "error" in request.args:
            declined = request.args["error"] == "access_denied"
            raise ProviderSignInRefused() if declined else ProviderFailed()
        code = request.args.get("code")
        if not code:
            raise ProviderFailed()
        profile = providers.profile(provider, provider_flow.callback_url(provider), code,
                                    pending.code_verifier, pending.nonce)
        return provider_flow.finish(pending, profile)
    except ProviderSignInRefused as refused:
        return provider_flow.refuse(pending, refused)
