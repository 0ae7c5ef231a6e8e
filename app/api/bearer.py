"""Reading the bearer token: from the Authorization header only (never the query string)."""

from __future__ import annotations

from flask import request

from app.domain.errors import InvalidToken, MissingToken
from app.domain.sessions.sessions import Bearer, authenticate_bearer


def bearer_token() -> str:
    header: str = request.environ.get("HTTP_AUTHORIZATION", "")
    if not header:
        raise MissingToken()
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise InvalidToken()
    return token


def current_bearer() -> Bearer:
    """The live session and account behind the request's access token."""
    return authenticate_bearer(bearer_token())
