"""The OpenAPI document's examples: a body for every request that takes one, and an answer for
every error each operation documents (the reference page, /api/docs, shows them and fills the
"try it out" form with the request's).

A problem body is built from the very error the service raises (app/domain/errors.py), through
the function that answers it (app/web/errors.py): an example's code and words are the answer's.
The OpenID Connect endpoints answer RFC 6749 errors, written here as they answer them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from app.api import admin_schemas as admin
from app.api import documents as out
from app.api import schemas as body
from app.api.operation import Operation
from app.domain.accounts import plans
from app.domain.accounts.breached import PasswordBreached
from app.domain.accounts.email_code_errors import EmailCodeOff, InvalidEmailCode
from app.domain.accounts.errors import (
    EmailTaken,
    InvalidCredentials,
    InvalidResetToken,
    InvalidState,
    ProviderNotEnabled,
    UnknownProvider,
    WeakPassword,
)
from app.domain.admin.idempotency import (
    IdempotencyKeyInUse,
    IdempotencyKeyReused,
    InvalidIdempotencyKey,
)
from app.domain.clients.errors import InvalidRedirectUri, UnknownCallback
from app.domain.errors import AuthError, InvalidBody, InvalidQuery, NotFound, RateLimited
from app.domain.factors.errors import (
    InvalidMfaToken,
    InvalidSecondFactor,
    LastSignInMethod,
    MfaRequired,
    StepUpRequired,
)
from app.domain.lifecycle.leaving import DeletionScheduled
from app.domain.limits import captcha_errors
from app.domain.sessions.errors import (
    EmailNotConfirmed,
    InvalidCode,
    InvalidRefreshToken,
    InvalidRequest,
)
from app.domain.tokens.errors import (
    InsufficientScope,
    InvalidToken,
    MissingToken,
    SessionRevoked,
    TokenExpired,
)
from app.web.errors import (
    DEPENDENCY_RETRY_AFTER,
    Failure,
    failure_body,
    http_problem_body,
    problem_body,
)


@dataclass(frozen=True)
class Example:
    status: int
    summary: str
    value: dict[str, Any]


def raised(error: AuthError, summary: str = "") -> Example:
    """The problem body the API answers when `error` is raised."""
    return Example(error.status, summary or error.code,
                   problem_body(error.status, error.code, error.detail, **error.members()))


def oauth(status: int, error: str, summary: str, description: str | None = None) -> Example:
    value = {"error": error} | ({"error_description": description} if description else {})
    return Example(status, summary, value)


def _http(status: int, method: str, summary: str) -> Example:
    return Example(status, summary, http_problem_body(status, method.upper()))


PASSWORD = "correct horse battery staple"  # noqa: S105  (an example on a public page)
TOKEN = "k7Xq2v9_Rr3YtW0aJmE5bLcN8pQsUhZ1dFgI4oK6"  # noqa: S105  (made up)
VERIFIER = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
REDIRECT_URI = "https://symbols.example/auth/callback"
CHALLENGE = {"provider": "turnstile", "site_key": "0x4AAAAAAAB8Cdsr9T3QIY5h"}
WEAK = WeakPassword("This password is too common. Choose one that is harder to guess.")
BREACHED = raised(PasswordBreached(), "password_breached (SVC_BREACHED_PASSWORDS_URL lists it)")
CAPTCHA = (raised(captcha_errors.CaptchaRequired(CHALLENGE)),
           raised(captcha_errors.CaptchaInvalid(CHALLENGE)))
ADDRESS = InvalidBody("Enter an email address, such as ada@example.com.",
                        [{"pointer": "#/email",
                          "detail": "Enter an email address, such as ada@example.com."}])
PROOF = (raised(InvalidCredentials("The password is not right.")),
         raised(InvalidSecondFactor(), "invalid_second_factor (an account without a password)"),
         raised(StepUpRequired("Send the account's password.")))
BEARER = (raised(MissingToken()), raised(InvalidToken()), raised(TokenExpired()))


def refused(model: type[BaseModel], data: dict[str, Any], summary: str,
            answer: type[InvalidBody] = InvalidBody) -> Example | None:
    """What the model's own validation answers to `data`, as the API says it (`answer`:
    InvalidQuery for a query's model)."""
    try:
        model.model_validate(data)
    except ValidationError as error:
        return raised(answer(errors=body.error_pointers(error)), summary)
    return None


OUT_OF_RANGE = refused(admin.DeliveriesQuery, {"limit": "0"}, "invalid_body (a parameter out of "
                                                                "range)", InvalidQuery)
assert OUT_OF_RANGE is not None
QUERY = (OUT_OF_RANGE,)
NOT_A_PLAN = refused(admin.UpdateUserBody, {"plan": "Gold plan"}, "invalid_body (not a plan "
                                                                  "word)")
assert NOT_A_PLAN is not None
UNLISTED = "There is no plan gold: the plans are free, pro, team."
PLANS = (NOT_A_PLAN, raised(plans.UnknownPlan(UNLISTED, [{"pointer": "#/plan",
                                                          "detail": UNLISTED}]),
                            "unknown_plan (the default SVC_PLANS, free,pro,team)"))


# Request bodies, by the model that validates them: (summary, value) each.
REQUESTS: dict[type[BaseModel], tuple[tuple[str, dict[str, Any]], ...]] = {
    body.SignupBody: (("An account", {"email": "ada@example.com", "password": PASSWORD,
                                      "full_name": "Ada Lovelace"}),),
    body.LoginBody: (("Email and password", {"email": "ada@example.com",
                                             "password": PASSWORD}),),
    body.V1LoginBody: (("Email and password", {"email": "ada@example.com", "password": PASSWORD,
                                               "captcha_token": ""}),),
    body.MfaBody: (("A code of the authenticator app", {"mfa_token": TOKEN, "code": "492039"}),),
    body.RefreshBody: (("The refresh token", {"refresh_token": TOKEN}),),
    body.ExchangeCodeBody: (("The handoff code, with PKCE", {
        "code": TOKEN, "provider": "google", "code_verifier": VERIFIER,
        "redirect_uri": REDIRECT_URI}),),
    body.EmailBody: (("An address", {"email": "ada@example.com"}),),
    body.EmailCodeVerifyBody: (("The mailed code", {"email": "ada@example.com",
                                                    "code": "40718263"}),),
    body.ResetPasswordBody: (("The mailed token and a new password", {
        "token": TOKEN, "new_password": PASSWORD}),),
    body.EmailChangeBody: (("The new address, proved by the password", {
        "new_email": "ada@lovelace.example", "password": PASSWORD}),),
    body.LeaveBody: (("Proved by the password", {"password": PASSWORD}),
                     ("Proved by a code (an account without a password)", {"code": "492039"})),
    admin.CreateUserBody: (("An invited account", {"email": "grace@example.com",
                                                   "full_name": "Grace Hopper", "plan": "pro"}),),
    admin.UpdateUserBody: (("A new plan", {"plan": "pro"}),
                           ("A new name", {"full_name": "Grace Brewster Hopper"})),
    admin.RetryDeliveriesBody: (("The waiting deliveries", {}),
                                ("Also those whose attempts ran out", {"failed": True})),
    out.TokenForm: (
        ("authorization_code (a public client, PKCE)", {
            "grant_type": "authorization_code", "code": TOKEN, "redirect_uri": REDIRECT_URI,
            "code_verifier": VERIFIER, "client_id": "symbols"}),
        ("refresh_token", {"grant_type": "refresh_token", "refresh_token": TOKEN,
                           "client_id": "symbols"}),
        ("client_credentials (a service client, with HTTP Basic)", {
            "grant_type": "client_credentials", "scope": "users:read"})),
    out.PushedRequestForm: (("An authorization request", {
        "response_type": "code", "client_id": "symbols", "redirect_uri": REDIRECT_URI,
        "scope": "openid email profile", "state": "af0ifjsldkj",
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256"}),),
    out.TokenHintForm: (("A refresh token", {"token": TOKEN,
                                             "token_type_hint": "refresh_token"}),),
}

# The errors of each operation, by operationId, besides those every operation of its kind has
# (`_common`, below).
PROBLEMS: dict[str, tuple[Example, ...]] = {
    "signup": (raised(EmailTaken()), raised(WEAK, "invalid_body (a weak password)"), BREACHED,
               *CAPTCHA, raised(captcha_errors.CaptchaUnavailable())),
    "login": (raised(InvalidCredentials()), raised(EmailNotConfirmed()),
              raised(MfaRequired("https://auth.example.com/login"),
                     "mfa_required (passkeys only: sign in on the hosted page)"), *CAPTCHA),
    "completeMfa": (raised(InvalidMfaToken()), raised(InvalidSecondFactor()),
                    raised(EmailNotConfirmed()),
                    raised(RateLimited(300), "rate_limited (too many wrong codes)")),
    "refresh": (raised(InvalidRefreshToken()), raised(EmailNotConfirmed())),
    "refreshV1": (raised(InvalidRefreshToken()), raised(EmailNotConfirmed())),
    "logout": (raised(InvalidQuery(errors=[{"pointer": "#/query/scope", "detail": (
        "scope must be local, others or global.")}])),),
    "startProviderSignIn": (
        raised(InvalidRedirectUri()),
        raised(InvalidRequest("code_challenge must be 43 base64url characters (S256).")),
        raised(UnknownProvider()), raised(ProviderNotEnabled()),
        raised(MissingToken(), "missing_token (`verify` in place of the provider)"),
        _http(405, "get", "method_not_allowed (`login` in place of the provider)")),
    "providerCallback": (raised(InvalidState()), _http(404, "get", "not_found"),
                         _http(405, "get", "method_not_allowed (`providers` in place of the "
                                           "provider)")),
    "startProviderSignInV1": (raised(UnknownCallback(
                                  "“notes” is not a registered client site.")),
                              raised(InvalidRequest("state must be 1 to 512 printable "
                                                      "characters.")),
                              raised(UnknownProvider()), raised(ProviderNotEnabled())),
    "exchangeCode": (raised(InvalidCode()), raised(EmailNotConfirmed())),
    "requestEmailCode": (raised(ADDRESS), *CAPTCHA, raised(captcha_errors.CaptchaUnavailable()),
                         raised(EmailCodeOff())),
    "verifyEmailCode": (raised(InvalidEmailCode()), raised(EmailCodeOff())),
    "forgotPassword": (raised(ADDRESS), *CAPTCHA, raised(captcha_errors.CaptchaUnavailable())),
    "resendConfirmation": (raised(ADDRESS), *CAPTCHA, raised(captcha_errors.CaptchaUnavailable())),
    "resetPassword": (raised(InvalidResetToken()), raised(WEAK, "invalid_body (a weak "
                                                                 "password)"),
                      raised(PasswordBreached("#/new_password"), "password_breached")),
    "unlinkProvider": (raised(NotFound("google is not linked to this account.")),
                       raised(LastSignInMethod())),
    "changeEmail": (*PROOF, raised(InvalidBody("That is already the account's address."))),
    "deleteAccount": PROOF,
    "exportAccount": (raised(RateLimited(3600), "rate_limited (SVC_LIMIT_EXPORT)"),),
    "loginV1": (raised(InvalidCredentials()), raised(EmailNotConfirmed()),
                raised(MfaRequired("https://auth.example.com/login")), *CAPTCHA),
    "health": (Example(503, "service_unavailable", problem_body(
        503, "service_unavailable", "The database is unreachable.")),),
    "ready": (Example(503, "service_unavailable", problem_body(
        503, "service_unavailable", "A dependency is unreachable.", database="unreachable",
        redis="ok")),),
    "adminCreateUser": (raised(EmailTaken()), *PLANS),
    "adminUpdateUser": PLANS,
    "adminEnableUser": (raised(DeletionScheduled()),),
    "adminListUsers": (raised(InvalidQuery("The cursor is not one this service gave.",
                                             [{"pointer": "#/cursor",
                                               "detail": "not a cursor of ours"}])),
                       *QUERY),
    "adminListDeliveries": QUERY,
    "adminUserEvents": QUERY,
    "oidcPushedRequest": (
        oauth(400, "invalid_request", "A parameter is missing, repeated or wrong",
              "A parameter is given more than once."),
        oauth(400, "unsupported_response_type", "response_type is not `code`"),
        oauth(401, "invalid_client", "The client's authentication failed")),
    "oidcToken": (
        oauth(400, "invalid_grant", "A code that is unknown, used, expired or another's",
              "Invalid 'code' in request."),
        oauth(400, "invalid_grant", "A refresh token that no longer works",
              "The refresh token is invalid, expired or revoked."),
        oauth(400, "unsupported_grant_type", "A grant_type other than the three"),
        oauth(400, "invalid_scope", "A scope the client may not have"),
        oauth(401, "invalid_client", "The client's authentication failed")),
    "oidcRevoke": (oauth(400, "invalid_request", "No token"),
                   oauth(401, "invalid_client", "The client's authentication failed")),
    "oidcIntrospect": (oauth(400, "invalid_request", "No token"),
                       oauth(401, "invalid_client", "A public client, or a failed "
                                                    "authentication")),
}
USERINFO = (oauth(401, "invalid_token", "No access token", "An access token is required."),
            oauth(401, "invalid_token", "An access token that is invalid or expired",
                  "The access token is invalid."),
            oauth(403, "insufficient_scope", "A token not issued with `openid`",
                  str(InsufficientScope().detail)))
PROBLEMS |= {"oidcUserinfo": USERINFO, "oidcUserinfoPost": USERINFO}


def _invalid_body(model: type[BaseModel]) -> tuple[Example, ...]:
    missing = refused(model, {}, "invalid_body (a field missing)")
    return (missing or raised(InvalidBody("The body is not valid JSON."),
                              "invalid_body (not JSON)"),)


def _common(op: Operation, status: int) -> tuple[Example, ...]:
    """The errors every operation of its kind may answer with `status`."""
    if op.errors is out.OAuthError:
        return (oauth(503, "temporarily_unavailable", "The database does not answer"),
                ) if status == 503 else ()
    admin_write = op.admin_scope is not None and op.method != "get"  # takes Idempotency-Key
    common: dict[int, tuple[Example, ...]] = {
        400: (raised(InvalidIdempotencyKey()),) if admin_write else (),
        401: (BEARER + ((raised(SessionRevoked()),) if op.bearer else ())
              if op.bearer or op.admin_scope else ()),
        403: (raised(InsufficientScope(str(op.admin_scope))),) if op.admin_scope else (),
        404: (raised(NotFound("No account has this id.")),) if op.admin_scope else (),
        409: (raised(IdempotencyKeyInUse()),) if admin_write else (),
        413: (_http(413, op.method, "payload_too_large"),),
        422: (_invalid_body(op.body) if op.body else ()) + (
            (raised(IdempotencyKeyReused()),) if admin_write else ()),
        429: (Example(429, "rate_limited", failure_body(Failure(429, "rate_limited", 60))),),
        503: (Example(503, "service_unavailable", failure_body(
            Failure(503, "service_unavailable", DEPENDENCY_RETRY_AFTER))),),
    }
    return common.get(status, ())


def errors_of(op: Operation, status: int) -> dict[str, dict[str, Any]]:
    """The `examples` of the error response `status` of `op`, each under its code: the
    operation's own first, then the common ones of a code it has not shown."""
    own = [x for x in PROBLEMS.get(op.operation_id, ()) if x.status == status]
    shown = {_code(x) for x in own}
    named: dict[str, dict[str, Any]] = {}
    for example in own + [x for x in _common(op, status) if _code(x) not in shown]:
        name = _code(example) if _code(example) not in named else example.summary
        named[name] = {"summary": example.summary, "value": example.value}
    return named


def _code(example: Example) -> str:
    return str(example.value.get("code") or example.value["error"])


def requests_of(model: type[BaseModel]) -> dict[str, dict[str, Any]]:
    return {f"example-{n}" if n else "example": {"summary": summary, "value": value}
            for n, (summary, value) in enumerate(REQUESTS[model])}
