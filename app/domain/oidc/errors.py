"""The refusals of OpenID Connect's pushed authorization requests (oidc/pushed_requests.py)."""

from __future__ import annotations

from app.domain.errors import AuthError, RateLimited
from app.domain.text import N_


class InvalidRequestUri(AuthError):
    """A pushed authorization request (RFC 9126) that is unknown, another client's, expired or
    already used."""

    status = 400
    code = "invalid_request_uri"
    detail = N_("This sign-in request expired or was already used. Go back to the site you came "
              "from and start again.")


class TooManyPushedRequests(RateLimited):
    """As many pushed authorization requests wait as a client, or an address, may have."""

    detail = N_("Too many pushed authorization requests are waiting. Try again later.")
