"""svc-auth for client sites written in Python: verify access tokens offline against the
service's published keys, and guard Flask views by token and by plan.

    from svc_auth_client import TokenVerifier, init_app, require_plan, require_token

The Flask guards need Flask; `TokenVerifier` alone needs only PyJWT and requests.
"""

from __future__ import annotations

from svc_auth_client.errors import (
    InvalidToken,
    KeysUnavailable,
    MissingToken,
    TokenError,
    TokenExpired,
)
from svc_auth_client.events import AccountState
from svc_auth_client.verify import TokenVerifier, fetch_jwks, parse_jwks

__all__ = [
    "AccountState",
    "InvalidToken",
    "KeysUnavailable",
    "MissingToken",
    "TokenError",
    "TokenExpired",
    "TokenVerifier",
    "current_claims",
    "fetch_jwks",
    "init_app",
    "parse_jwks",
    "problem",
    "require_plan",
    "require_token",
    "verified_event",
]

try:  # the Flask guards, when Flask is installed
    from svc_auth_client.flask_helpers import (
        current_claims,
        init_app,
        problem,
        require_plan,
        require_token,
    )
except ModuleNotFoundError as missing:  # pragma: no cover
    if missing.name != "flask":
        raise

try:  # the webhook verifier, when standardwebhooks (and Flask) are installed
    from svc_auth_client.webhooks import verified_event
except ModuleNotFoundError as missing:  # pragma: no cover
    if missing.name not in ("flask", "standardwebhooks"):
        raise
