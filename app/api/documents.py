"""Response bodies, as pydantic models: the OpenAPI document's schemas for what we answer.

Requests are validated with app/api/schemas.py; these describe the answers. The contract tests
(tests/contract/) check every real response against them, so they cannot drift.
"""

from __future__ import annotations

from typing import Literal

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


class Problem(BaseModel):
    """RFC 9457 problem details, with a stable `code`."""

    model_config = ConfigDict(extra="allow")

    type: str
    title: str
    status: int
    code: str
    detail: str
    errors: list[FieldError] | None = None
    retry_after: int | None = Field(None, description="Seconds, on 429.")


class Health(Document):
    status: Literal["ok"]


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
    model_config = ConfigDict(extra="allow")

    issuer: str
    jwks_uri: str
