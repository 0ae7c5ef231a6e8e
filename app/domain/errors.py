"""Typed errors of the domain, each with a stable code and an HTTP status: the domain raises
them, each surface answers them (app/web/errors.py, app/pages/). Here the base and the refusals
every room may raise; the others are beside the room that raises them, in its errors.py
(accounts/, factors/, sessions/, tokens/, clients/, oidc/; limits/captcha_errors.py)."""

from typing import Any

from app.domain.text import N_


class AuthError(Exception):
    status = 400
    code = "bad_request"
    detail: str = N_("The request could not be processed.")
    retry_after: int | None = None  # seconds: every surface answers it with Retry-After

    def members(self) -> dict[str, Any]:
        """What the API's problem body says besides its type, title, status, code and detail."""
        return {}

    def __init__(self, detail: str | None = None) -> None:
        super().__init__(detail or self.detail)
        if detail:
            self.detail = detail


class InvalidBody(AuthError):
    status = 422
    code = "invalid_body"
    detail = N_("The request body is invalid.")

    def __init__(self, detail: str | None = None, errors: list[dict[str, str]] | None = None):
        super().__init__(detail)
        self.errors = errors or []

    def members(self) -> dict[str, Any]:
        return {"errors": self.errors} if self.errors else {}


class InvalidQuery(InvalidBody):
    """A query parameter is wrong. The code stays `invalid_body` (codes are stable, and clients
    already handle it on 422); the detail no longer blames a body the request may not have."""

    detail = N_("A query parameter is invalid.")


class NotFound(AuthError):
    status = 404
    code = "not_found"
    detail = N_("There is nothing here.")


class RateLimited(AuthError):
    """Too many attempts: answered 429 with Retry-After, before any password is hashed."""

    status = 429
    code = "rate_limited"
    detail = N_("Too many attempts. Try again later.")
    retry_after: int  # always set: every 429 says when to try again

    def __init__(self, retry_after: int, detail: str | None = None) -> None:
        super().__init__(detail)
        self.retry_after = max(1, retry_after)

    def members(self) -> dict[str, Any]:
        return {"retry_after": self.retry_after}  # the same contract as flask-limiter's 429s
