"""The OpenAPI 3.1 document of the JSON API (the reference page, /api/docs, shows it:
app/api/reference.py).

Request bodies come from the very models that validate them (app/api/schemas.py), responses
from app/api/documents.py; the operations are listed once, below.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from flask import Blueprint, Response, jsonify
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from app.api import admin_openapi, examples
from app.api import documents as out
from app.api import schemas as body
from app.api.operation import Answer, Operation, Param
from app.infra.settings import settings

REF = "#/components/schemas/{model}"


PROVIDER = Param("provider", "path", True, "`google` or `github`",
                 {"type": "string", "enum": ["google", "github"]})
TARGET = (
    Param("state", description="The client site's own state, returned as it was."),
    Param("code_challenge", description="PKCE S256 challenge (43 base64url characters)."),
    Param("code_challenge_method", description="`S256` when a challenge is sent.",
          schema={"type": "string", "enum": ["S256"]}),
)
AUTHORIZE = (
    Param("response_type", schema={"type": "string", "enum": ["code"]},
          description="Required, unless `request_uri` brings it."),
    Param("client_id", required=True, description="The site's registered name."),
    Param("redirect_uri", description="Exactly one the site registered; required, unless "
                                      "`request_uri` brings it."),
    Param("request_uri", description="From POST /oauth2/par (RFC 9126): the parameters that "
                                     "client pushed, which are then the only ones read. Any "
                                     "other is refused: `request_uri_not_supported`."),
    Param("scope", description="Of `openid email profile` (the default: all three), and "
                               "`offline_access`, which any site may add (its refresh token "
                               "comes either way)."),
    Param("response_mode", schema={"type": "string", "enum": ["query"]},
          description="`query`, the default; any other is refused: `invalid_request`."),
    Param("request", description="Request objects are not supported: `request_not_supported`."),
    Param("state"), Param("nonce", description="Echoed in the ID token."),
    Param("code_challenge", description="PKCE S256; required of public clients."),
    Param("code_challenge_method", schema={"type": "string", "enum": ["S256"]}),
    Param("prompt", description="`none`, `login`, `consent` or `create`."),
    Param("max_age", description="Seconds since the last sign-in, at most."),
    Param("login_hint", description="An address to fill in on the login page."),
)
LOGOUT = (Param("id_token_hint", description="An ID token of ours."),
          Param("post_logout_redirect_uri", description="One the client registered."),
          Param("client_id"), Param("state"))
# The endpoints a browser opens answer their errors with a page, a database outage too.
BROWSER_ERRORS: dict[int, Answer] = {400: Answer.PAGE, 503: Answer.PAGE}
FROM_TOKENS = {  # after a response with tokens: refresh with its refresh token
    "RefreshWithToken": {"operationId": "refresh",
                         "requestBody": {"refresh_token": "$response.body#/refresh_token"}},
}

SITE_OPERATIONS = (
    Operation("post", "/api/v2/auth/signup", "signup",
              "Create an account and sign in (or, when confirmation is required, only create it)",
              "v2", {201: out.SignupResponse, 409: out.Problem}, body=body.SignupBody,
              links={201: {**FROM_TOKENS, "LoginAfterSignup": {
                  "operationId": "login", "requestBody": {
                      "email": "$request.body#/email", "password": "$request.body#/password"}}}}),
    Operation("post", "/api/v2/auth/login", "login", "Sign in with email and password", "v2",
              {200: out.LoginOrMfaResponse, 401: out.Problem, 403: out.Problem},
              body=body.LoginBody, links={200: FROM_TOKENS},
              description="For an account with a second factor, 200 with `mfa_required`, an "
                          "`mfa_token` and the `methods` instead of tokens: complete it with "
                          "POST /api/v2/auth/mfa. Problems: 401 `invalid_credentials`, 403 "
                          "`email_not_confirmed`, 429 `rate_limited`."),
    Operation("post", "/api/v2/auth/email-code", "requestEmailCode",
              "Mail a sign-in code", "v2", {202: out.Detail, 403: out.Problem},
              body=body.EmailBody,
              description="The same 202 for every well-formed address: an existing, enabled "
                          "account is mailed an 8-digit code and a link (10 minutes, single "
                          "use; a new one replaces the last), any other address nothing. "
                          "Limited per address mailed and per caller (SVC_LIMIT_FORGOT, "
                          "SVC_LIMIT_FORGOT_IP); the captcha as for forgotPassword. 403 "
                          "`email_code_off` where the service or the calling site (by its "
                          "`Origin`) turned it off."),
    Operation("post", "/api/v2/auth/email-code/verify", "verifyEmailCode",
              "Sign in with a mailed code", "v2",
              {200: out.LoginOrMfaResponse, 401: out.Problem, 403: out.Problem},
              body=body.EmailCodeVerifyBody, links={200: FROM_TOKENS},
              description="The login response, as login's, with `amr` [\"otp\"] in "
                          "the access token; `mfa_required` for an account with a second "
                          "factor. A code proves the address: an unconfirmed one is confirmed. "
                          "Problems: 401 `invalid_code` (wrong, used, expired, or for an "
                          "address with no enabled account; five tries per code), 403 "
                          "`email_code_off`, 429 `rate_limited`."),
    Operation("post", "/api/v2/auth/mfa", "completeMfa",
              "Complete a sign-in with a second factor", "v2",
              {200: out.LoginResponse, 401: out.Problem, 403: out.Problem},
              body=body.MfaBody, links={200: FROM_TOKENS},
              description="Problems: 401 `invalid_mfa_token` (unknown, used, expired, or not an "
                          "`mfa_token`: sign in again), 401 `invalid_second_factor` (a wrong or "
                          "used code; after 5 the `mfa_token` is spent), 429 `rate_limited` "
                          "(too many wrong codes on the account)."),
    Operation("get", "/api/v2/auth/verify", "verify", "Check an access token", "v2",
              {200: out.VerifyResponse}, bearer=True),
    Operation("post", "/api/v2/auth/refresh", "refresh", "Rotate a refresh token", "v2",
              {200: out.LoginResponse, 401: out.Problem, 403: out.Problem}, body=body.RefreshBody,
              links={200: FROM_TOKENS}),
    Operation("post", "/api/v2/auth/logout", "logout", "End sessions", "v2",
              {204: None, 422: out.Problem},
              bearer=True, params=(Param("scope", description="Which sessions end.", schema={
                  "type": "string", "enum": ["local", "others", "global"],
                  "default": "local"}),)),
    Operation("get", "/api/v2/auth/{provider}", "startProviderSignIn",
              "Start signing in with a provider", "v2",
              # 401 and 405: the name of one of our own endpoints in place of the provider
              # (`verify`, `login`...) reaches that endpoint instead.
              {302: Answer.REDIRECT, 400: out.Problem, 401: out.Problem, 404: out.Problem,
               405: out.Problem},
              params=(PROVIDER, Param("redirect_uri", required=True,
                                      description="A redirect URI registered by a client site."),
                      *TARGET)),
    Operation("get", "/api/v2/auth/{provider}/callback", "providerCallback",
              "Where the provider sends the browser back", "v2",
              # 405: `providers` in place of the provider is the unlink endpoint's path.
              {302: Answer.REDIRECT, 400: out.Problem, 404: out.Problem, 405: out.Problem},
              params=(PROVIDER, Param("state", required=True), Param("code"), Param("error"))),
    Operation("post", "/api/v2/auth/exchange-code", "exchangeCode",
              "Trade a one-time handoff code for tokens", "v2",
              {200: out.LoginResponse, 401: out.Problem, 403: out.Problem},
              body=body.ExchangeCodeBody,
              links={200: FROM_TOKENS}),
    Operation("post", "/api/v2/auth/forgot-password", "forgotPassword",
              "Mail a password-reset link", "v2", {202: out.Detail}, body=body.EmailBody),
    Operation("post", "/api/v2/auth/reset-password", "resetPassword",
              "Set a new password with a reset token", "v2",
              {200: out.Detail, 400: out.Problem}, body=body.ResetPasswordBody),
    Operation("post", "/api/v2/auth/resend-confirmation", "resendConfirmation",
              "Mail a new email-confirmation link", "v2", {202: out.Detail}, body=body.EmailBody),
    Operation("delete", "/api/v2/auth/providers/{provider}", "unlinkProvider",
              "Unlink a sign-in provider", "v2", {204: None, 404: out.Problem, 409: out.Problem},
              bearer=True, params=(PROVIDER,)),
    Operation("post", "/api/v2/auth/email", "changeEmail", "Change the account's address",
              "v2", {202: out.Detail, 401: out.Problem, 403: out.Problem, 422: out.Problem},
              body=body.EmailChangeBody, bearer=True,
              description="A link goes to the new address; nothing changes until it is opened. "
                          "The old address is then told, with a link that undoes the change "
                          "and ends every session (7 days). The same 202 whether or not an "
                          "account has the new address (its holder is told by mail instead). "
                          "Proof: `password`, or for an account without one a `code`: 401 "
                          "`invalid_credentials` or `invalid_second_factor` when wrong, 403 "
                          "`step_up_required` when missing."),
    Operation("delete", "/api/v2/auth/account", "deleteAccount", "Close the account", "v2",
              {202: out.LeaveResponse, 401: out.Problem, 403: out.Problem},
              body=body.LeaveBody, bearer=True,
              description="At once every session and token ends and the account signs in no "
                          "more; a mailed link restores it until `erase_after`, when it is "
                          "erased. Proof as for changeEmail."),
    Operation("get", "/api/v2/auth/account/export", "exportAccount",
              "Download the account's data", "v2", {200: out.AccountExport, 429: out.Problem},
              bearer=True, description="Profile, linked providers, sessions, second factors "
                                       "by kind, passkeys by name, consents and audit events; "
                                       "no secret. Limited per account (SVC_LIMIT_EXPORT)."),
    Operation("post", "/api/v1/auth/login", "loginV1", "Sign in (v1 shape)", "v1",
              {200: out.V1LoginResponse, 401: out.Problem, 403: out.Problem},
              body=body.V1LoginBody, links={200: FROM_TOKENS},
              description="v1 has no second step: for an account with a second factor, 403 "
                          "`mfa_required` with `login_url`, the hosted login page, where the "
                          "person can sign in instead (a client site sends them there with its "
                          "`callback`)."),
    Operation("post", "/api/v1/auth/refresh", "refreshV1", "Rotate a refresh token (v1 shape)",
              "v1", {200: out.TokenPair, 401: out.Problem, 403: out.Problem},
              body=body.RefreshBody),
    Operation("get", "/api/v1/auth/{provider}/login", "startProviderSignInV1",
              "Start signing in with a provider, back to a named site", "v1",
              {302: Answer.REDIRECT, 400: out.Problem, 404: out.Problem},
              params=(PROVIDER, Param("callback", required=True,
                                      description="A registered site name, e.g. `symbols`."),
                      *TARGET)),
    Operation("get", "/.well-known/jwks.json", "jwks", "The public signing keys", "metadata",
              {200: out.Jwks}),
    Operation("get", "/.well-known/openid-configuration", "issuerMetadata",
              "Issuer metadata", "metadata", {200: out.IssuerMetadata}),
    Operation("get", "/health", "health", "Liveness (503 when the database is unreachable)",
              "metadata", {200: out.Health}),
    Operation("get", "/health/ready", "ready", "Readiness: the database and Redis", "metadata",
              {200: out.Readiness}),
    Operation("get", "/oauth2/authorize", "oidcAuthorize",
              "Authorization endpoint (through the hosted login; a page, or a redirect to the "
              "client with `code` or `error`)", "oidc",
              {200: Answer.PAGE, 302: Answer.REDIRECT, **BROWSER_ERRORS, 403: Answer.PAGE,
               429: Answer.PAGE}, params=AUTHORIZE, errors=out.OAuthError),
    Operation("post", "/oauth2/authorize", "oidcConsent",
              "The consent page's answer (`decision=allow|deny`, its CSRF token)", "oidc",
              {302: Answer.REDIRECT, **BROWSER_ERRORS, 403: Answer.PAGE, 429: Answer.PAGE},
              params=AUTHORIZE, errors=out.OAuthError),
    Operation("post", "/oauth2/par", "oidcPushedRequest",
              "Push an authorization request (RFC 9126)", "oidc",
              {201: out.PushedRequest, 400: out.OAuthError, 401: out.OAuthError},
              form=out.PushedRequestForm, client_auth=True, errors=out.OAuthError),
    Operation("post", "/oauth2/token", "oidcToken", "Token endpoint (RFC 6749)", "oidc",
              {200: out.OidcTokens, 400: out.OAuthError, 401: out.OAuthError},
              form=out.TokenForm, client_auth=True, errors=out.OAuthError),
    Operation("get", "/oauth2/userinfo", "oidcUserinfo", "The person's claims, by scope", "oidc",
              {200: out.UserInfo, 403: out.OAuthError}, bearer=True, errors=out.OAuthError),
    Operation("post", "/oauth2/userinfo", "oidcUserinfoPost", "The same, by POST", "oidc",
              {200: out.UserInfo, 403: out.OAuthError}, bearer=True, errors=out.OAuthError),
    Operation("post", "/oauth2/revoke", "oidcRevoke", "Revoke a token (RFC 7009)", "oidc",
              {200: out.Revoked, 400: out.OAuthError, 401: out.OAuthError},
              form=out.TokenHintForm, client_auth=True, errors=out.OAuthError),
    Operation("post", "/oauth2/introspect", "oidcIntrospect",
              "Introspect a token (RFC 7662; confidential clients)", "oidc",
              {200: out.Introspection, 400: out.OAuthError, 401: out.OAuthError},
              form=out.TokenHintForm, client_auth=True, errors=out.OAuthError),
    Operation("get", "/oauth2/logout", "oidcLogout", "RP-initiated logout", "oidc",
              {200: Answer.PAGE, 302: Answer.REDIRECT, **BROWSER_ERRORS}, params=LOGOUT,
              errors=out.OAuthError),
    Operation("post", "/oauth2/logout", "oidcLogoutPost", "RP-initiated logout, by POST", "oidc",
              {200: Answer.PAGE, 302: Answer.REDIRECT, **BROWSER_ERRORS}, params=LOGOUT,
              errors=out.OAuthError),
)

OPERATIONS = (*SITE_OPERATIONS, *admin_openapi.OPERATIONS)
IDEMPOTENCY_KEY = {"name": "Idempotency-Key", "in": "header", "required": False,
                   "description": "Makes a retry safe (see the operation).",
                   "schema": {"type": "string", "minLength": 1, "maxLength": 255}}

PAGE = {"text/html": {"schema": {"type": "string"}}}
STATUS_TEXT = {200: "OK", 201: "Created", 202: "Accepted", 204: "No content", 302: "Redirect",
               400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
               405: "Method not allowed (the path names another endpoint)",
               409: "Conflict", 413: "Body over 64 KiB", 422: "Invalid body or parameter",
               429: "Too many requests", 503: "A dependency is unavailable"}


def _media(model: type[BaseModel]) -> dict[str, Any]:
    kind = "application/problem+json" if model is out.Problem else "application/json"
    return {kind: {"schema": {"$ref": REF.format(model=model.__name__)}}}


def _operation(op: Operation) -> dict[str, Any]:
    responses: dict[int, type[BaseModel] | Answer | None] = {503: op.errors, **op.responses}
    if op.body is not None:
        responses |= {413: out.Problem, 422: out.Problem, 429: out.Problem}
    if op.bearer or op.admin_scope:
        responses |= {401: op.errors}
    if op.admin_scope:
        responses |= {403: op.errors, 429: out.Problem}
    spec: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary,
                            "tags": [op.tag], "responses": {}}
    if op.description:
        spec["description"] = op.description
    for status, answer in sorted(responses.items()):
        entry: dict[str, Any] = {"description": STATUS_TEXT[status]}
        if isinstance(answer, type):
            entry["content"] = _media(answer)
            if status >= 400:
                for media in entry["content"].values():
                    media["examples"] = examples.errors_of(op, status)
        elif answer is Answer.REDIRECT:
            entry["headers"] = {"Location": {"schema": {"type": "string"}}}
        elif answer is Answer.PAGE:
            entry["content"] = PAGE
        if status in (401, 403) and (op.bearer or op.admin_scope):
            entry["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
        if status in op.links:
            entry["links"] = op.links[status]
        spec["responses"][str(status)] = entry
    for model, kind in ((op.body, "application/json"),
                        (op.form, "application/x-www-form-urlencoded")):
        if model is not None:
            spec["requestBody"] = {"required": True, "content": {kind: {
                "schema": {"$ref": REF.format(model=model.__name__)},
                "examples": examples.requests_of(model)}}}
    if op.params:
        spec["parameters"] = [{"name": p.name, "in": p.where, "required": p.required,
                               "description": p.description, "schema": p.schema}
                              for p in op.params]
    spec["security"] = ([{"bearer": []}] if op.bearer
                         else [{"serviceClient": [op.admin_scope]}] if op.admin_scope
                         else [{"clientSecretBasic": []}, {}] if op.client_auth else [])
    if op.admin_scope and op.method != "get":  # every write of the admin API
        spec.setdefault("parameters", []).append(IDEMPOTENCY_KEY)
    return spec


def _schemas() -> dict[str, Any]:
    requests = {model for op in OPERATIONS for model in (op.body, op.form) if model is not None}
    responses: set[type[BaseModel]] = {answer for op in OPERATIONS
                                       for answer in op.responses.values()
                                       if isinstance(answer, type)} | {out.Problem, out.OAuthError}
    pairs: list[tuple[type[BaseModel], JsonSchemaMode]] = [
        (model, "validation") for model in sorted(requests, key=lambda m: m.__name__)]
    pairs += [(model, "serialization") for model in sorted(responses, key=lambda m: m.__name__)]
    _, definitions = models_json_schema(pairs, ref_template=REF)
    return dict(sorted(definitions.get("$defs", {}).items()))


@cache
def _document(public_url: str, brand: str) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method] = _operation(op)
    return {
        "openapi": "3.1.0",
        "info": {"title": f"{brand} account service (svc-auth)", "version": "2",
                 "description": "Accounts, tokens and sign-in for the client sites. Errors are "
                                "RFC 9457 problem details with a stable code."},
        "servers": [{"url": public_url}],
        "tags": [{"name": "v2", "description": "The main interface"},
                 {"name": "v1", "description": "What the client sites already call"},
                 {"name": "metadata", "description": "Keys, issuer and health"},
                 {"name": "oidc", "description": "The OpenID Connect provider (RFC 6749 "
                                                 "errors, form bodies)"},
                 {"name": "admin", "description": "Accounts for service clients (billing, "
                                                  "support): client_credentials tokens with "
                                                  "admin scopes"}],
        "paths": paths,
        "components": {
            "schemas": _schemas(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "bearerFormat": "JWT"},
                                "clientSecretBasic": {"type": "http", "scheme": "basic"},
                                "serviceClient": admin_openapi.security_scheme(public_url)},
        },
    }


def document() -> dict[str, Any]:
    return _document(settings().public_url, settings().brand)


bp = Blueprint("openapi", __name__)


@bp.get("/api/openapi.json")
def openapi_json() -> Response:
    response = jsonify(document())
    response.headers["Cache-Control"] = "public, max-age=300"
    return response
