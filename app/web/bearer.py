"""Reading the bearer token, the one rule for the API and /oauth2/userinfo (RFC 6750 §2.1): from
the Authorization header only, never the form or the query string."""

from __future__ import annotations

from flask import request

from app.domain.sessions.sessions import Bearer, authenticate_bearer
from app.domain.tokens.errors import InvalidToken, MissingToken


def bearer_token() -> str:
    """The token of `Authorization: Bearer <token>`; no header is MissingToken, any other shape
    (another scheme, no token, a token with a space in it) InvalidToken."""
    untrusted_header = str(request.environ.get("HTTP_AUTHORIZATION", ""))
    if not untrusted_header:
        raise MissingToken()
    scheme, _, untrusted_token = untrusted_header.partition(" ")
    untrusted_token = untrusted_token.strip()
    if scheme.lower() != "bearer" or not untrusted_token or " " in untrusted_token:
        raise InvalidToken()
    return untrusted_token


def current_bearer() -> Bearer:
    """The live session and account behind the request's access token."""
    return authenticate_bearer(bearer_token())
