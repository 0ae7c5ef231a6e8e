"""The refusals of a client site's addresses (clients/sites.py)."""

from __future__ import annotations

from app.domain.errors import AuthError
from app.domain.text import N_


class InvalidRedirectUri(AuthError):
    status = 400
    code = "invalid_redirect_uri"
    detail = N_("redirect_uri is not registered for any client site.")


class UnknownCallback(AuthError):
    status = 400
    code = "unknown_callback"
    detail = N_("callback does not name a registered client site.")
