"""The refusals of a bearer token (tokens/tokens.py, sessions, OpenID Connect): each answered
with its WWW-Authenticate challenge (app/web/errors.py)."""

from __future__ import annotations

from app.domain.errors import AuthError
from app.domain.text import N_


class BearerError(AuthError):
    """A 401 on a bearer-protected endpoint: answered with WWW-Authenticate: Bearer."""

    status = 401


class MissingToken(BearerError):
    code = "missing_token"
    detail = N_("An access token is required.")


class InvalidToken(BearerError):
    code = "invalid_token"
    detail = N_("The access token is invalid.")


class InsufficientScope(BearerError):
    """An access token that was not issued to an OpenID Connect client with `openid`, at
    /oauth2/userinfo, or without the admin scope an admin endpoint needs (RFC 6750 §3.1)."""

    status = 403
    code = "insufficient_scope"
    detail = N_("The access token was not issued for the openid scope.")
    scope = "openid"  # the scope the endpoint needs

    def __init__(self, scope: str | None = None) -> None:
        super().__init__(f"This needs a token with the {scope} scope." if scope else None)
        self.scope = scope or self.scope


class TokenExpired(BearerError):
    code = "token_expired"
    detail = N_("The access token has expired.")


class SessionRevoked(BearerError):
    code = "session_revoked"
    detail = N_("This session has ended. Sign in again.")
