"""The refusals of sessions, refresh tokens and handoff codes (sessions/)."""

from __future__ import annotations

from app.domain.errors import AuthError
from app.domain.text import N_


class InvalidRefreshToken(AuthError):
    status = 401
    code = "invalid_token"
    detail = N_("The refresh token is invalid or has expired.")


class InvalidRequest(AuthError):
    status = 400
    code = "invalid_request"
    detail = N_("The request is missing a parameter or has an invalid one.")


class InvalidCode(AuthError):
    status = 401
    code = "invalid_code"
    detail = N_("The code is invalid, expired or already used.")


class EmailNotConfirmed(AuthError):
    status = 403
    code = "email_not_confirmed"
    detail = N_("Confirm your email address first: we sent you a link.")
