"""Public metadata: the signing keys, the issuer's description, and liveness."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, url_for

from app.domain import health as dependencies
from app.domain.clients import sites
from app.domain.oidc import authorization
from app.domain.services import services
from app.domain.sessions import sessions
from app.infra.settings import settings
from app.version import VERSION
from app.web.errors import problem, register_problem_errors

bp = Blueprint("wellknown", __name__)
register_problem_errors(bp)


def _cacheable(response: Response, seconds: int) -> Response:
    response.headers["Cache-Control"] = f"public, max-age={seconds}"
    return response


@bp.get("/.well-known/jwks.json")
def jwks() -> Response:
    # Short enough that a rotated-in key is seen well before it signs most tokens.
    return _cacheable(jsonify(services().access_tokens.keyring.jwks()), 300)


# What the OpenID Connect provider (app/oidc) offers, and nothing it does not (OpenID Connect
# Discovery 1.0 §3; RFC 8414).
OIDC_ENDPOINTS = {"authorization_endpoint": "oidc.authorize", "token_endpoint": "oidc.token",
                  "userinfo_endpoint": "oidc.userinfo", "revocation_endpoint": "oidc.revoke",
                  "introspection_endpoint": "oidc.introspect",
                  "end_session_endpoint": "oidc.end_session",
                  "pushed_authorization_request_endpoint": "oidc.push_authorization_request"}
CLIENT_AUTH_METHODS = ["client_secret_basic", "client_secret_post", "none"]


@bp.get("/.well-known/openid-configuration")
def issuer_metadata() -> Response:
    base = settings().public_url
    return _cacheable(jsonify({
        "issuer": base,
        "jwks_uri": f"{base}/.well-known/jwks.json",
        **{name: f"{base}{url_for(view)}" for name, view in OIDC_ENDPOINTS.items()},
        "scopes_supported": [*sites.SUPPORTED_SCOPES, sites.OFFLINE_ACCESS],
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": [settings().jwt_alg],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS,
        "introspection_endpoint_auth_methods_supported": CLIENT_AUTH_METHODS[:2],
        "prompt_values_supported": ["none", "login", "consent", "create"],
        "claims_supported": list(authorization.CLAIMS),
        "acr_values_supported": list(sessions.ASSURANCE_LEVELS),  # what `acr` says; not enforced
        "claims_parameter_supported": False,
        # Request objects (OpenID Connect Core §6) are refused, by value (request_not_supported)
        # and by reference (request_uri_not_supported); the request_uri of a pushed request is
        # RFC 9126's, which pushed_authorization_request_endpoint announces.
        "request_parameter_supported": False,
        "request_uri_parameter_supported": False,
        "require_pushed_authorization_requests": False,
        # OpenID Connect Back-Channel Logout 1.0 (app/domain/oidc/backchannel.py)
        "backchannel_logout_supported": True,
        "backchannel_logout_session_supported": True,
    }), 3600)


@bp.get("/health")
def health() -> Response:
    """Liveness: 200 `{"status": "ok", "version": ...}`, or 503 when the database is
    unreachable."""
    if dependencies.database_state() != "ok":
        return problem(503, "service_unavailable", "The database is unreachable.")
    response = jsonify({"status": "ok", "version": VERSION})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/health/ready")
def ready() -> Response:
    """Readiness for a load balancer: the database and, when configured, Redis answer."""
    database, redis = dependencies.database_state(), dependencies.redis_state()
    if "unreachable" in (database, redis):
        return problem(503, "service_unavailable", "A dependency is unreachable.",
                       database=database, redis=redis)
    response = jsonify({"status": "ok", "database": database, "redis": redis})
    response.headers["Cache-Control"] = "no-store"
    return response
