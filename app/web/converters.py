"""URL converters for the API."""

from __future__ import annotations

from werkzeug.routing import BaseConverter

# Paths under /api/v*/auth/ that are endpoints of their own, not provider names.
RESERVED = ("login", "signup", "verify", "refresh", "logout", "exchange-code", "forgot-password",
            "reset-password", "resend-confirmation", "providers", "mfa", "email", "account",
            "email-code")


class ProviderConverter(BaseConverter):
    """Any one path segment but our own endpoint names, so that `GET /api/v2/auth/login` is
    still a 405 rather than an unknown provider called "login". No control character: a NUL
    would reach PostgreSQL, which cannot even compare one (a 500 instead of a 404)."""

    regex = r"(?!(?:" + "|".join(RESERVED) + r")(?:/|$))[^/\x00-\x1f\x7f]{1,64}"
