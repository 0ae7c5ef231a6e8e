"""Public metadata: the signing keys, the issuer's description, and liveness."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.api.problems import problem, register_api_errors
from app.domain.services import services
from app.extensions import db

bp = Blueprint("wellknown", __name__)
register_api_errors(bp)


def _cacheable(response: Response, seconds: int) -> Response:
    response.headers["Cache-Control"] = f"public, max-age={seconds}"
    return response


@bp.get("/.well-known/jwks.json")
def jwks() -> Response:
    # Short enough that a rotated-in key is seen well before it signs most tokens.
    return _cacheable(jsonify(services().access_tokens.keyring.jwks()), 300)


@bp.get("/.well-known/openid-configuration")
def issuer_metadata() -> Response:
    base = current_app.config["PUBLIC_URL"]
    return _cacheable(jsonify({
        "issuer": base,
        "jwks_uri": f"{base}/.well-known/jwks.json",
        "authorization_endpoint": f"{base}/login",
        "token_endpoint": f"{base}/api/v2/auth/exchange-code",
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "code_challenge_methods_supported": ["S256"],
        "id_token_signing_alg_values_supported": [current_app.config["JWT_ALG"]],
        "token_endpoint_auth_methods_supported": ["none"],
    }), 3600)


@bp.get("/health")
def health() -> Response | tuple[Response, int]:
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return problem(503, "service_unavailable", "The database is unreachable.")
    response = jsonify({"status": "ok"})
    response.headers["Cache-Control"] = "no-store"
    return response
