"""/api/v2: the main interface."""

from __future__ import annotations

from collections.abc import Callable

from flask import Response, request

from app.api.logins import sign_in_with_email_code, sign_in_with_password, site_of_caller
from app.api.schemas import (
    EmailBody,
    EmailCodeVerifyBody,
    ExchangeCodeBody,
    LoginBody,
    MfaBody,
    RefreshBody,
    ResetPasswordBody,
    SignupBody,
    parse_body,
)
from app.api.shaping import account_json, confirmation_pending_json, login_json, no_store
from app.domain import addresses, sign_in
from app.domain.accounts import email_sign_in, identities, recovery
from app.domain.audit import ClientInfo
from app.domain.errors import InvalidQuery
from app.domain.factors.pending import SecondFactorRequired
from app.domain.sessions import handoff, sessions
from app.domain.sessions.sessions import IssuedTokens
from app.domain.sign_in import ApiSignIn
from app.web import captcha, locale, ratelimits
from app.web.bearer import current_bearer
from app.web.client import client_info
from app.web.errors import problem_blueprint

bp = problem_blueprint("api_v2", "/api/v2")


@bp.post("/auth/signup")
@ratelimits.signup
def signup() -> Response:
    body = parse_body(SignupBody)
    captcha.check_signup(body.email, body.password, body.captcha_token)
    client = client_info()
    # The language the request's Accept-Language names, if one of ours (docs/accounts/
    # languages.md): a browser's, when the site signs the person up from there.
    user, issued = sign_in.sign_up(body.email, body.password, body.full_name,
                                   ApiSignIn(client=client), language=locale.from_browser())
    if issued is None:  # SVC_REQUIRE_EMAIL_CONFIRMATION: no session before the link is used
        return no_store(confirmation_pending_json(user), 201)
    return no_store(login_json(issued), 201)


@bp.post("/auth/login")
@ratelimits.login
def login() -> Response:
    body = parse_body(LoginBody)
    return _login_answer(sign_in_with_password(body.email, body.password, body.captcha_token))


@bp.post("/auth/email-code")
@ratelimits.email_code
def request_email_code() -> tuple[Response, int]:
    site = site_of_caller()
    return _promise_mail(lambda email, client: email_sign_in.request_code(email, client,
                                                                         site=site),
                         EMAIL_CODE_ANSWER, captcha.EMAIL_CODE)


@bp.post("/auth/email-code/verify")
@ratelimits.email_code_verify
def verify_email_code() -> Response:
    body = parse_body(EmailCodeVerifyBody)
    return _login_answer(sign_in_with_email_code(body.email, body.code))


def _login_answer(signed_in: IssuedTokens | SecondFactorRequired) -> Response:
    if isinstance(signed_in, SecondFactorRequired):
        return no_store({"mfa_required": True, "mfa_token": signed_in.token,
                         "methods": signed_in.methods, "expires_in": signed_in.expires_in})
    return no_store(login_json(signed_in))


@bp.post("/auth/mfa")
@ratelimits.second_factor
def complete_mfa() -> Response:
    body = parse_body(MfaBody)
    client = client_info()
    issued = sign_in.complete_api_second_step(body.mfa_token, client,
                                              sign_in.CodeProof(body.code))
    return no_store(login_json(issued))


@bp.get("/auth/verify")
def verify() -> Response:
    bearer = current_bearer()
    return no_store({"valid": True, "user": account_json(bearer.account),
                     "session_id": bearer.session_id, "expires_at": bearer.expires_at})


@bp.post("/auth/refresh")
@ratelimits.refresh
def refresh() -> Response:
    body = parse_body(RefreshBody)
    return no_store(login_json(sessions.refresh(body.refresh_token, client_info())))


@bp.post("/auth/logout")
def logout() -> tuple[str, int]:
    bearer = current_bearer()
    untrusted_scope = request.args.get("scope", "local")
    try:
        scope = sessions.LogoutScope(untrusted_scope)
    except ValueError:
        raise InvalidQuery(errors=[{"pointer": "#/query/scope",
                                    "detail": "scope must be local, others or global."}]) from None
    sessions.log_out(bearer.session_id, bearer.account.id, scope, client_info())
    return "", 204


@bp.post("/auth/exchange-code")
@ratelimits.exchange
def exchange_code() -> Response:
    body = parse_body(ExchangeCodeBody)
    issued = handoff.redeem(body.code, body.provider, body.code_verifier, body.redirect_uri,
                            client_info())
    return no_store(login_json(issued))


@bp.delete("/auth/providers/<provider:provider>")
def unlink_provider(provider: str) -> tuple[str, int]:
    identities.unlink(current_bearer().account.id, provider, client_info())
    return "", 204


FORGOT_ANSWER = {"detail": "If an account exists for this email, a reset link has been sent."}
EMAIL_CODE_ANSWER = {"detail": "If an account exists for this email, a sign-in code has been "
                               "sent."}
RESEND_ANSWER = {"detail": "If this email needs confirming, a new link has been sent."}


@bp.post("/auth/forgot-password")
@ratelimits.forgot
def forgot_password() -> tuple[Response, int]:
    return _promise_mail(recovery.request_reset, FORGOT_ANSWER, captcha.FORGOT_PASSWORD)


@bp.post("/auth/reset-password")
@ratelimits.reset
def reset_password() -> Response:
    body = parse_body(ResetPasswordBody)
    recovery.reset_password(body.token, body.new_password, client_info())
    return no_store({"detail": "Password updated."})


@bp.post("/auth/resend-confirmation")
@ratelimits.resend_confirmation
def resend_confirmation() -> tuple[Response, int]:
    return _promise_mail(recovery.request_confirmation, RESEND_ANSWER,
                         captcha.RESEND_CONFIRMATION)


def _promise_mail(request_mail: Callable[[str, ClientInfo], None],
                  answer: dict[str, str], purpose: str) -> tuple[Response, int]:
    """The same 202 for every well-formed address: whether a mail goes is the outbox's to know."""
    body = parse_body(EmailBody)
    email = addresses.require_well_formed(body.email)
    captcha.check(purpose, body.captcha_token)
    request_mail(email, client_info())
    return no_store(answer), 202
