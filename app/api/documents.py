"""Response bodies, as pydantic models: the OpenAPI document's schemas for what we answer.

Requests are validated with app/api/schemas.py; these describe the answers. The contract tests
(tests/system/contract/) check every real response against them, so they cannot drift.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel


class Document(BaseModel):
    model_config = ConfigDict(extra="forbid")


class User(Document):
    id: str = Field(description="UUID")
    email: str
    full_name: str
    plan: str = Field(description="Subscription plan, `free` unless changed by an operator.")
    email_verified: bool


class AccountUser(User):
    providers: list[Literal["google", "github"]] = Field(
        description="Sign-in providers linked to the account.")


class TokenPair(Document):
    access_token: str = Field(description="A JWT (ES256 by default), valid for `expires_in` s.")
    refresh_token: str = Field(description="Opaque; rotated on every use.")
    token_type: Literal["bearer"]
    expires_in: int


class LoginResponse(TokenPair):
    user: User


class ConfirmationPending(Document):
    """Sign-up with SVC_REQUIRE_EMAIL_CONFIRMATION: the account exists, no session does yet."""

    user: User
    confirmation_required: Literal[True]
    detail: str


class SignupResponse(RootModel[LoginResponse | ConfirmationPending]):
    """Tokens, or (when the address must be confirmed first) no tokens."""


class MfaRequired(Document):
    """The password was right, and the account has a second factor: no tokens yet. Send a code
    with `mfa_token` to POST /api/v2/auth/mfa."""

    mfa_required: Literal[True]
    mfa_token: str = Field(description="Short-lived (`expires_in` s), single use, good only at "
                                       "POST /api/v2/auth/mfa.")
    methods: list[Literal["totp", "recovery_code"]] = Field(
        description="The second factors the account can complete this sign-in with here. (A "
                    "passkey answers only on the hosted pages: an account with passkeys and no "
                    "other factor here gets 403 `mfa_required` and the hosted login's address.)")
    expires_in: int


class LoginOrMfaResponse(RootModel[LoginResponse | MfaRequired]):
    """Tokens, or (for an account with a second factor) a second step to complete."""


class V1LoginResponse(LoginResponse):
    session: TokenPair


class VerifyResponse(Document):
    valid: Literal[True]
    user: AccountUser
    session_id: str
    expires_at: int = Field(description="The access token's expiry, in Unix seconds.")


class Detail(Document):
    detail: str


class FieldError(Document):
    pointer: str = Field(description='A JSON pointer into the request, e.g. "#/email".')
    detail: str


class CaptchaChallenge(Document):
    """The captcha widget a client must show: its provider and public site key."""

    provider: Literal["turnstile", "hcaptcha", "recaptcha"]
    site_key: str


class Problem(BaseModel):
    """RFC 9457 problem details, with a stable `code`."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    code: str = Field(description=(
        "Stable. Among them, on 422: `invalid_body`, `password_breached` (sign-up and "
        "reset: the password is in a breach corpus, `errors` points at it), "
        "`captcha_required` (sign-up, "
        "forgot-password and resend-confirmation whenever captcha is on; sign-in after recent "
        "failures for the email or the address), `captcha_invalid` (a token the provider "
        "refused, or one already used); on 503: `captcha_unavailable` (sign-up, "
        "forgot-password, resend-confirmation: the provider does not answer; sign-in goes on "
        "without it)."))
    detail: str
    errors: list[FieldError] | None = None
    retry_after: int | None = Field(None, description="Seconds, on 429.")
    login_url: str | None = Field(None, description="On 403 `mfa_required` (API v1): the hosted "
                                                    "login page, where a second factor can be "
                                                    "given.")
    captcha: CaptchaChallenge | None = Field(None, description=(
        "With `captcha_required` and `captcha_invalid` (pointer `#/captcha_token`): the widget "
        "to render; send its token as `captcha_token`."))


class Health(Document):
    status: Literal["ok"]
    version: str = Field(description="The release this instance runs (CHANGELOG.md).")


class Readiness(Document):
    status: Literal["ok"]
    database: str
    redis: str


class Jwk(BaseModel):
    model_config = ConfigDict(extra="allow")

    kty: str
    kid: str
    alg: str
    use: Literal["sig"]


class Jwks(Document):
    keys: list[Jwk]


class IssuerMetadata(BaseModel):
    """OpenID Connect Discovery 1.0 (and RFC 8414's revocation and introspection endpoints,
    RFC 9126's pushed authorization request endpoint)."""

    model_config = ConfigDict(extra="allow")

    issuer: str
    jwks_uri: str
    authorization_endpoint: str
    token_endpoint: str
    userinfo_endpoint: str
    revocation_endpoint: str
    introspection_endpoint: str
    end_session_endpoint: str
    pushed_authorization_request_endpoint: str
    response_types_supported: list[str]
    subject_types_supported: list[str]
    id_token_signing_alg_values_supported: list[str]


# The OpenID Connect provider (app/oidc): its forms, answers and RFC 6749 errors ------------------

class OAuthError(BaseModel):
    """An RFC 6749 error (§5.2): the OAuth endpoints answer with these, not problem details."""

    model_config = ConfigDict(extra="allow")

    error: str = Field(description="`invalid_request`, `invalid_client` (its description says "
                                   "how the client is registered to authenticate), "
                                   "`invalid_grant`, `unauthorized_client`, "
                                   "`unsupported_grant_type`, `invalid_scope`, `invalid_token`, "
                                   "`insufficient_scope`, `request_not_supported`, "
                                   "`request_uri_not_supported`...")
    error_description: str | None = None


class TokenForm(BaseModel):
    """`application/x-www-form-urlencoded`; a public client names itself with `client_id`, a
    confidential one authenticates with HTTP Basic or `client_id` + `client_secret`."""

    grant_type: Literal["authorization_code", "refresh_token", "client_credentials"]
    code: str | None = Field(None, description="authorization_code: the code.")
    redirect_uri: str | None = Field(None, description="authorization_code: as sent to "
                                                       "/oauth2/authorize.")
    code_verifier: str | None = Field(None, description="authorization_code: the PKCE verifier.")
    refresh_token: str | None = Field(None, description="refresh_token: the refresh token.")
    scope: str | None = Field(None, description="refresh_token: the scope again, or part of it.")
    client_id: str | None = None
    client_secret: str | None = None


class PushedRequestForm(BaseModel):
    """`application/x-www-form-urlencoded` (RFC 9126): the authorization request's parameters
    (as for GET /oauth2/authorize, each once), with the client's authentication as at the token
    endpoint."""

    model_config = ConfigDict(extra="allow")

    response_type: Literal["code"]
    redirect_uri: str
    scope: str | None = None
    state: str | None = None
    nonce: str | None = None
    code_challenge: str | None = None
    code_challenge_method: Literal["S256"] | None = None
    prompt: str | None = None
    max_age: str | None = None
    login_hint: str | None = None
    client_id: str | None = None
    client_secret: str | None = None


class PushedRequest(Document):
    request_uri: str = Field(description="Send the browser to /oauth2/authorize with only "
                                         "`client_id` and this; single use.")
    expires_in: int = Field(description="Seconds it stays usable (600).")


class TokenHintForm(BaseModel):
    """`application/x-www-form-urlencoded` (RFC 7009, RFC 7662)."""

    token: str
    token_type_hint: Literal["access_token", "refresh_token"] | None = None
    client_id: str | None = None
    client_secret: str | None = None


class OidcTokens(Document):
    access_token: str = Field(description="The service's at+jwt, with `client_id` and `scope` "
                                          "(client_credentials: the admin audience, `sub` the "
                                          "client id).")
    token_type: Literal["Bearer"]
    expires_in: int
    refresh_token: str | None = Field(None, description="Not for client_credentials.")
    scope: str
    id_token: str | None = Field(None, description="With scope `openid`.")


class UserInfo(Document):
    sub: str
    email: str | None = Field(None, description="Scope `email`.")
    email_verified: bool | None = Field(None, description="Scope `email`.")
    name: str | None = Field(None, description="Scope `profile`.")


class Introspection(BaseModel):
    """RFC 7662: `{"active": false}` for a token that is not active, or not the caller's to ask
    about."""

    model_config = ConfigDict(extra="allow")

    active: bool


class Revoked(Document):
    """RFC 7009: an empty object, for every token, whether it was the client's or not."""


class LeaveResponse(Document):
    detail: str
    erase_after: str = Field(description="When the account is erased (ISO 8601), unless the "
                                         "link mailed to its owner restores it before.")


class ExportProfile(Document):
    id: str
    email: str
    full_name: str
    plan: str
    email_verified: bool
    created_at: str


class ExportProvider(Document):
    provider: str
    subject: str
    email: str | None
    linked_at: str


class ExportSession(Document):
    created_at: str
    last_used_at: str
    ended_at: str | None
    device: str | None
    ip: str | None
    site: str | None


class ExportFactors(Document):
    authenticator_app: bool
    recovery_codes_left: int


class ExportPasskey(Document):
    name: str
    created_at: str


class ExportConsent(Document):
    client_id: str
    scope: str
    granted_at: str


class ExportEvent(Document):
    """What was done and when; `by` is a role (`support`, `administrator`, a service client's
    job such as `billing`) or null for the owner's own requests, which alone show where from."""

    at: str
    event: str
    ip: str | None
    device: str | None
    by: str | None
    changes: dict[str, dict[str, Any]] | None


class AccountExport(Document):
    """Everything the service holds about the account, without a secret."""

    profile: ExportProfile
    providers: list[ExportProvider]
    sessions: list[ExportSession]
    second_factors: ExportFactors
    passkeys: list[ExportPasskey]
    consents: list[ExportConsent]
    audit_events: list[ExportEvent]
