"""Public metadata: the signing keys, the issuer's description, and liveness."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify
from redis import RedisError
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from app.domain.tools import tools
from app.extensions import db
from app.web.errors import problem, register_problem_errors

bp = Blueprint("wellknown", __name__)
register_problem_errors(bp)


def _cacheable(response: Response, seconds: int) -> Response:
    response.headers["Cache-Control"] = f"public, max-age={seconds}"
    return response


@bp.get("/.well-known/jwks.json")
def jwks() -> Response:
    # Short enough that a rotated-in key is seen well before it signs most tokens.
    return _cacheable(jsonify(tools().access_tokens.keyring.jwks()), 300)


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


def _database_ok() -> bool:
    try:
        db.session.execute(text("SELECT 1"))
    except SQLAlchemyError:
        return False
    return True


def _redis_state() -> str:
    redis = tools().live_sessions.redis
    if redis is None:
        return "not configured"
    try:
        redis.ping()
    except RedisError:
        return "unreachable"
    return "ok"


@bp.get("/health")
def health() -> Response:
    """Liveness, and (as DESIGN section 4 asks) 503 when the database is unreachable."""
    if not _database_ok():
        return problem(503, "service_unavailable", "The database is unreachable.")
    response = jsonify({"status": "ok"})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/health/ready")
def ready() -> Response:
    """Readiness for a load balancer: the database and, when configured, Redis answer."""
    database, redis = ("ok" if _database_ok() else "unreachable"), _redis_state()
    if "unreachable" in (database, redis):
        return problem(503, "service_unavailable", "A dependency is unreachable.",
                       database=database, redis=redis)
    response = jsonify({"status": "ok", "database": database, "redis": redis})
    response.headers["Cache-Control"] = "no-store"
    return response
