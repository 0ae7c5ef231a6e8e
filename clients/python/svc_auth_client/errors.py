"""Why a token was refused, each with the stable `code` the service uses for the same case."""

from __future__ import annotations

from typing import ClassVar


class TokenError(Exception):
    """The request's access token cannot be trusted: answer 401."""

    code: ClassVar[str] = "invalid_token"
    default_detail: ClassVar[str] = "The access token is not valid."

    def __init__(self, detail: str | None = None) -> None:
        self.detail = detail or self.default_detail
        super().__init__(self.detail)


class MissingToken(TokenError):
    code = "missing_token"
    default_detail = "This request needs a bearer access token."


class InvalidToken(TokenError):
    code = "invalid_token"
    default_detail = "The access token is not valid."


class TokenExpired(TokenError):
    code = "token_expired"
    default_detail = "The access token has expired."


class KeysUnavailable(Exception):
    """The service's signing keys could not be fetched: the token's fault is unknown (503)."""

    code: ClassVar[str] = "keys_unavailable"

    def __init__(self, detail: str = "The account service's signing keys are unavailable.") -> None:
        self.detail = detail
        super().__init__(detail)
