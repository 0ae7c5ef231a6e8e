"""Typed errors of the domain, each with a stable code and an HTTP status.

The API turns them into problem+json once (app/api/problems.py); the domain only raises them.
"""

from __future__ import annotations


class AuthError(Exception):
    status = 400
    code = "bad_request"
    detail = "The request could not be processed."

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.detail)
        if detail:
            self.detail = detail


class InvalidBody(AuthError):
    status = 422
    code = "invalid_body"
    detail = "The request body is invalid."

    def __init__(self, detail: str | None = None, errors: list[dict[str, str]] | None = None):
        super().__init__(detail)
        self.errors = errors or []


class WeakPassword(InvalidBody):
    def __init__(self, reason: str, pointer: str = "#/password"):
        super().__init__(reason, [{"pointer": pointer, "detail": reason}])


class InvalidCredentials(AuthError):
    status = 401
    code = "invalid_credentials"
    detail = "Incorrect email or password."


class BearerError(AuthError):
    """A 401 on a bearer-protected endpoint: answered with WWW-Authenticate: Bearer."""

    status = 401


class MissingToken(BearerError):
    code = "missing_token"
    detail = "An access token is required."


class InvalidToken(BearerError):
    code = "invalid_token"
    detail = "The access token is invalid."


class TokenExpired(BearerError):
    code = "token_expired"
    detail = "The access token has expired."


class SessionRevoked(BearerError):
    code = "session_revoked"
    detail = "This session has ended. Sign in again."


class InvalidRefreshToken(AuthError):
    status = 401
    code = "invalid_token"
    detail = "The refresh token is invalid or has expired."


class EmailTaken(AuthError):
    status = 409
    code = "email_taken"
    detail = "An account with this email already exists."


class NotFound(AuthError):
    status = 404
    code = "not_found"
    detail = "There is nothing here."
