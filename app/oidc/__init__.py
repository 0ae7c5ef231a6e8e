"""The OpenID Connect provider's endpoints: authorization (through the hosted login), pushed
authorization requests, token, userinfo, revocation, introspection and RP-initiated logout.
The protocol is authlib's (app/oidc/server.py); the rules are the domain's
(app/domain/oidc/authorization.py, domain/oidc/pushed_requests.py)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from authlib.oauth2.rfc6749 import AccessDeniedError, InvalidRequestError, OAuth2Error
from authlib.oidc.core.errors import ConsentRequiredError, LoginRequiredError
from authlib.oidc.rpinitiated import EndSessionRequest
from flask import (
    Blueprint,
    Flask,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_wtf.csrf import validate_csrf
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response
from wtforms import ValidationError

from app.domain.clock import now
from app.domain.errors import AuthError
from app.domain.oidc import authorization
from app.domain.oidc.errors import InvalidRequestUri, TooManyPushedRequests
from app.domain.tokens.errors import BearerError
from app.oidc import server as oidc_server
from app.oidc.clients import params_of
from app.oidc.endpoints import goes_unasked
from app.oidc.pushed import authorization_request
from app.web import browser, pending_authorization, ratelimits
from app.web.bearer import bearer_token
from app.web.client import client_info
from app.web.errors import Failure, register_failures

bp = Blueprint("oidc", __name__)


def init_app(app: Flask) -> None:
    app.extensions[oidc_server.SERVER_KEY] = oidc_server.build(app)


def _page(status: int, title: str, detail: str) -> tuple[str, int]:
    return render_template("errors/page.html", title=title, detail=detail, status=status), status


_BROWSER_FACING = ("oidc.authorize", "oidc.authorize_decision", "oidc.end_session")


def _failure(failure: Failure) -> Response | tuple[str, int, dict[str, str]]:
    """429, 500, 503: a page for the browser's endpoints, OAuth's JSON for the clients'."""
    headers = {**failure.headers}
    if failure.retry_after is not None:
        headers["Retry-After"] = str(failure.retry_after)
    if request.endpoint in _BROWSER_FACING:
        return (*_page(failure.status, _("This request could not be answered now"),
                       _("Wait a little, then try again.")), headers)
    response = jsonify(error="temporarily_unavailable" if failure.status == 503
                       else "server_error" if failure.status >= 500 else "slow_down")
    response.status_code = failure.status
    response.headers.update(headers)
    return response


register_failures(bp, _failure)


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> Response | tuple[str, int]:
    """A request werkzeug refuses (a body over the size limit: 413): a page for the browser's
    endpoints, OAuth's JSON for the clients', not the 500 of the handler above."""
    status = error.code or 400
    if request.endpoint in _BROWSER_FACING:
        return _page(status, error.name, error.description or "")
    response = jsonify(error="invalid_request", error_description=error.description)
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    return response


# Authorization -------------------------------------------------------------------------------

def _refused(error: OAuth2Error) -> Response | tuple[str, int]:
    """An error goes back to the client only once its redirect URI is validated (RFC 6749
    §4.1.2.1); before that, the person sees a page and nobody is redirected."""
    if error.redirect_uri:
        response = oidc_server.error_response(error)
        response.headers["Cache-Control"] = "no-store"
        return response
    return _page(400, _("This sign-in request cannot be used"),
                 error.description or _("The site that sent you here made a mistake."))


def _max_age(params: Mapping[str, str]) -> int | None:
    untrusted_max_age = params.get("max_age")
    if untrusted_max_age is None:
        return None
    if not re.fullmatch(r"[0-9]{1,9}", untrusted_max_age):  # not isdigit(): "²" is one
        raise InvalidRequestError("max_age must be a number of seconds.")
    return int(untrusted_max_age)


def _prompts(params: Mapping[str, str]) -> set[str]:
    prompts = set((params.get("prompt") or "").split())
    if "none" in prompts and len(prompts) > 1:
        raise InvalidRequestError("prompt=none cannot be combined with another prompt.")
    return prompts


def _must_sign_in(signed_in: browser.BrowserUser | None, prompts: set[str],
                  max_age: int | None, waited: pending_authorization.Pending | None) -> bool:
    """Whether the person must (again) sign in before the client gets a code: signed out, or
    `prompt=login` (or `create`), or a sign-in older than max_age, unless they signed in since
    this request came."""
    if signed_in is None:
        return True
    signed_in_at = authorization.auth_time(signed_in.auth_session)
    if waited is not None and signed_in_at >= waited.asked_at:
        return False
    if prompts & {"login", "create"}:
        return True
    return max_age is not None and int(now().timestamp()) - signed_in_at > max_age


def _signed_out() -> bool:
    return browser.current() is None


@bp.get("/oauth2/authorize")
@ratelimits.single_sign_on(exempt_when=_signed_out)
def authorize() -> Response | tuple[str, int]:
    return _authorize(None)


@bp.post("/oauth2/authorize")
@ratelimits.single_sign_on(exempt_when=_signed_out)
def authorize_decision() -> Response | tuple[str, int]:
    """The consent page's answer, with the authorization request still in the query."""
    try:
        validate_csrf(request.form.get("csrf_token"))
    except ValidationError:
        return _page(400, _("This form expired or did not come from this site"),
                     _("Go back to the site and sign in again."))
    untrusted = request.form.get("decision")
    return _authorize(Decision(untrusted) if untrusted in list(Decision) else None)


class Decision(StrEnum):
    """The consent page's two buttons (templates/oidc/consent.html); None is no answer yet."""

    ALLOW = "allow"
    DENY = "deny"


def _authorize(decision: Decision | None) -> Response | tuple[str, int]:
    server = oidc_server.server()
    signed_in = browser.current()
    try:
        asked = authorization_request()
        grant = server.get_consent_grant(request=asked, end_user=signed_in)
    except InvalidRequestUri as error:
        return _dead_request_uri(error)
    except OAuth2Error as error:
        return _refused(error)
    params = params_of(asked).data
    query = request.query_string.decode()
    waited = pending_authorization.pending()
    waited = waited if waited is not None and waited.query == query else None
    try:
        if len(query) > pending_authorization.MAX_QUERY:
            raise InvalidRequestError("The authorization request is too long.")
        prompts = _prompts(params)
        if _must_sign_in(signed_in, prompts, _max_age(params), waited):
            if "none" in prompts:
                raise LoginRequiredError()
            return _to_sign_in(signed_in, prompts, params, query, waited)
        assert signed_in is not None
        if not _consented(grant, signed_in, prompts, decision):
            if "none" in prompts:
                raise ConsentRequiredError()
            return _consent_page(grant, signed_in)
    except OAuth2Error as error:
        error.redirect_uri, error.state = grant.redirect_uri, params.get("state")
        return _refused(error)
    try:
        response = oidc_server.flask_response(server.create_authorization_response(
            request=asked, grant=grant, grant_user=signed_in))
    except InvalidRequestUri as error:  # spent meanwhile, by another tab
        return _dead_request_uri(error)
    except AuthError as error:  # EmailNotConfirmed: as for the handoff, a page and no code
        return _page(error.status, _("You cannot sign in to this site yet"), error.detail)
    response.headers["Cache-Control"] = "no-store"
    return pending_authorization.forget(response) if waited is not None else response


def _dead_request_uri(error: InvalidRequestUri) -> Response:
    """A page, and no sign-in waits for this request any more: the next one goes to the account
    page, not back here."""
    response = make_response(_page(error.status, _("This sign-in request cannot be used"),
                                   error.detail))
    return pending_authorization.forget(response)


def _consented(grant: Any, signed_in: browser.BrowserUser, prompts: set[str],
               decision: Decision | None) -> bool:
    """The family's own sites need no consent; another site needs the person's, once per scope
    (again with `prompt=consent`). AccessDeniedError when they refuse."""
    site, scope = grant.client.site, grant.request.scope
    if site.first_party:
        return True
    if decision is Decision.DENY:
        raise AccessDeniedError()
    if decision is Decision.ALLOW:
        authorization.give_consent(signed_in.user.id, site.client_id, scope, client_info())
        return True
    return "consent" not in prompts and authorization.has_consent(signed_in.user.id,
                                                                  site.client_id, scope)


def _consent_page(grant: Any, signed_in: browser.BrowserUser) -> tuple[str, int]:
    return render_template("oidc/consent.html", site=grant.client.site,
                           scopes=grant.request.scope.split(), user=signed_in.user,
                           action=request.full_path), 200


def _to_sign_in(signed_in: browser.BrowserUser | None, prompts: set[str],
                params: Mapping[str, str], query: str,
                waited: pending_authorization.Pending | None) -> Response:
    page = "pages.signup_form" if "create" in prompts else "pages.login_form"
    again: dict[str, Any] = {"prompt": "login"} if signed_in is not None else {}
    if params.get("login_hint") and page == "pages.login_form":
        again["login_hint"] = params["login_hint"]
    asked_at = waited.asked_at if waited is not None else int(now().timestamp())
    return pending_authorization.remember(redirect(url_for(page, **again)), query, asked_at)


# Pushed authorization requests (RFC 9126) ---------------------------------------------------

def _check_pushed(params: Mapping[str, str]) -> None:
    """What the authorization endpoint checks beyond authlib: max_age and prompt."""
    _max_age(params)
    _prompts(params)


@bp.post("/oauth2/par")
@ratelimits.oidc_token
def push_authorization_request() -> Response:
    try:
        return oidc_server.push_authorization_request(_check_pushed)
    except TooManyPushedRequests as error:  # RFC 9126 §2.3: a 429, as the rate limit's
        response = _failure(Failure(error.status, error.code, error.retry_after))
        assert isinstance(response, Response)  # a client's endpoint: JSON
        response.headers["Cache-Control"] = "no-store"
        return response


# Tokens --------------------------------------------------------------------------------------

@bp.post("/oauth2/token")
@ratelimits.oidc_token
def token() -> Response:
    return oidc_server.flask_response(oidc_server.server().create_token_response())


@bp.post("/oauth2/revoke")
@ratelimits.oidc_token
def revoke() -> Response:
    return oidc_server.flask_response(oidc_server.server().create_endpoint_response("revocation"))


@bp.post("/oauth2/introspect")
@ratelimits.oidc_token
def introspect() -> Response:
    response = oidc_server.flask_response(
        oidc_server.server().create_endpoint_response("introspection"))
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.route("/oauth2/userinfo", methods=["GET", "POST"])
def userinfo() -> Response:
    try:
        response = jsonify(authorization.userinfo(bearer_token()))
    except BearerError as error:
        code = error.code if error.code == "insufficient_scope" else "invalid_token"
        response = jsonify(error=code, error_description=error.detail)
        response.status_code = error.status
        response.headers["WWW-Authenticate"] = f'Bearer error="{code}"'
    response.headers["Cache-Control"] = "no-store"
    return response


# RP-initiated logout -------------------------------------------------------------------------

@bp.route("/oauth2/logout", methods=["GET", "POST"])
def end_session() -> Response | tuple[str, int]:
    server = oidc_server.server()
    try:
        validated = server.validate_endpoint_request("end_session")
        assert isinstance(validated, EndSessionRequest)  # EndSession.validate_request's
    except OAuth2Error as error:  # never a redirect (OpenID RP-Initiated Logout §4)
        return _page(400, _("This sign-out request cannot be used"),
                     error.description or _("The site that sent you here made a mistake."))
    if validated.needs_confirmation or not goes_unasked(validated):  # ask, as the spec advises
        return render_template("oidc/logout.html", confirm=browser.current() is not None), 200
    response: Response | None = server.create_endpoint_response("end_session", validated)
    return response or (render_template("oidc/logout.html", confirm=False), 200)
