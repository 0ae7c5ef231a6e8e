"""Request bodies: strict (no unknown fields, no type coercion), parsed in one place."""

from __future__ import annotations

import json
from typing import Annotated, TypeVar

from flask import request
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.domain.errors import InvalidBody
from app.domain.text import NO_NUL, PRINTABLE

# The characters we accept (app/domain/text.py).
Text = Annotated[str, Field(pattern=PRINTABLE)]
Secret = Annotated[str, Field(pattern=NO_NUL)]
Email = Annotated[Text, Field(min_length=1, max_length=320)]
Password = Annotated[Secret, Field(min_length=1, max_length=1024)]
OpaqueToken = Annotated[Text, Field(min_length=1, max_length=512)]
# A captcha provider's token (domain/limits/captcha.py); "" means none, as the v1 clients send it.
CaptchaToken = Annotated[Text, Field(max_length=4096, description=(
    "The captcha widget's token. Asked for on sign-up, forgot-password and resend-confirmation"
    " whenever captcha is on; on sign-in only after recent failures for the email or the"
    " address (a 422 `captcha_required` says so, with the widget's `captcha` settings)."
    " Empty or absent: none."))]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class LoginBody(Body):
    email: Email
    password: Password
    captcha_token: CaptchaToken = ""


class V1LoginBody(LoginBody):
    """The client sites send `captcha_token`, an empty string until they show a widget."""


class SignupBody(Body):
    email: Email
    password: Password
    full_name: Annotated[Text, Field(max_length=200)] = ""
    captcha_token: CaptchaToken = ""


class RefreshBody(Body):
    refresh_token: OpaqueToken


class EmailBody(Body):
    """forgot-password, resend-confirmation and email-code: just an address."""

    email: Email
    captcha_token: CaptchaToken = ""


class EmailCodeVerifyBody(Body):
    """Sign in with the code mailed after POST /auth/email-code."""

    email: Email
    code: Annotated[Text, Field(min_length=1, max_length=32, description=(
        "The 8-digit code of the mail (spaces and hyphens are ignored)."))]


class ResetPasswordBody(Body):
    token: OpaqueToken
    new_password: Password


class ExchangeCodeBody(Body):
    code: OpaqueToken
    # Any name: a wrong one must burn the code (401), not be refused before it is looked at.
    provider: Annotated[Text, Field(min_length=1, max_length=32)]
    code_verifier: Annotated[Text, Field(max_length=256)] | None = None
    redirect_uri: Annotated[Text, Field(max_length=2048)] | None = None


class MfaBody(Body):
    """Complete a sign-in that answered `mfa_required`."""

    mfa_token: OpaqueToken
    code: Annotated[Text, Field(min_length=1, max_length=32,
                                description="A code of the authenticator app (6 digits), or "
                                            "a recovery code.")]


Code = Annotated[Text, Field(min_length=1, max_length=32, description=(
    "For an account without a password: a code of its authenticator app, or a recovery code."))]


class EmailChangeBody(Body):
    """The proof: the account's `password`, or for an account without one a `code`."""

    new_email: Email
    password: Password | None = None
    code: Code | None = None


class LeaveBody(Body):
    """The proof: the account's `password`, or for an account without one a `code`."""

    password: Password | None = None
    code: Code | None = None


B = TypeVar("B", bound=Body)


def parse_body(model: type[B]) -> B:
    """The request's JSON body as `model`, or InvalidBody saying exactly what is wrong."""
    if not request.is_json:
        raise InvalidBody("Send a JSON object with Content-Type: application/json.")
    try:
        data = json.loads(request.get_data(cache=True))
    except (ValueError, RecursionError):
        raise InvalidBody("The body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise InvalidBody("The body must be a JSON object.")
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidBody(errors=error_pointers(error)) from None


def error_pointers(error: ValidationError) -> list[dict[str, str]]:
    """Pydantic's errors as JSON pointers, without echoing any submitted value."""
    return [
        {"pointer": "#/" + "/".join(str(part) for part in item["loc"]),
         "detail": item["msg"]}
        for item in error.errors(include_input=False, include_url=False)
    ]
