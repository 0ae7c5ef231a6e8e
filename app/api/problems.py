"""Every error under /api/ as application/problem+json (RFC 9457): never HTML, never a trace."""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask_limiter.errors import RateLimitExceeded
from redis import RedisError
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from app.api import ratelimits
from app.domain.errors import AuthError, BearerError, InvalidBody, RateLimited

log = logging.getLogger("svc_auth.api")

API_PREFIX = "/api/"
# Paths whose errors are problem bodies: the API, and the machine-facing endpoints beside it.
MACHINE_PREFIXES = (API_PREFIX, "/.well-known/", "/health", "/metrics")

# Stable codes for the HTTP errors raised outside our own views.
_HTTP_CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 413: "payload_too_large",
    415: "unsupported_media_type", 429: "rate_limited", 500: "internal_error",
    503: "service_unavailable",
}


def problem(status: int, code: str, detail: str, *, headers: dict[str, str] | None = None,
            **extra: Any) -> Response:
    from http import HTTPStatus

    body = {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
            "code": code, "detail": detail, **extra}
    response = jsonify(body)
    response.status_code = status
    response.mimetype = "application/problem+json"
    response.headers["Cache-Control"] = "no-store"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _auth_error(error: AuthError) -> Response:
    extra: dict[str, Any] = {}
    headers: dict[str, str] = {}
    if isinstance(error, InvalidBody) and error.errors:
        extra["errors"] = error.errors
    if isinstance(error, RateLimited):  # the same contract as flask-limiter's 429s below
        headers["Retry-After"] = str(error.retry_after)
        extra["retry_after"] = error.retry_after
    if isinstance(error, BearerError):
        headers["WWW-Authenticate"] = (
            'Bearer realm="svc-auth"' if error.code == "missing_token"
            else f'Bearer realm="svc-auth", error="invalid_token", error_description="{error.code}"'
        )
    return problem(error.status, error.code, error.detail, headers=headers, **extra)


def _rate_limited(_error: RateLimitExceeded) -> Response:
    retry_after = ratelimits.retry_after()
    return problem(429, "rate_limited", "Too many attempts. Try again later.",
                   headers={"Retry-After": str(retry_after)}, retry_after=retry_after)


def http_error(error: HTTPException) -> Response:
    status = error.code or 500
    detail = {
        404: "There is nothing at this address.",
        405: f"{request.method} is not allowed here.",
        413: "The request body is larger than 64 KiB.",
    }.get(status, error.description or "The request could not be processed.")
    allowed = getattr(error, "valid_methods", None)
    headers = {"Allow": ", ".join(allowed)} if allowed else {}
    return problem(status, _HTTP_CODES.get(status, "http_error"), detail, headers=headers)


def _dependency_unavailable(error: Exception) -> Response:
    """The database, or Redis when rate limits fail closed, does not answer."""
    log.error("%s unavailable: %s", "redis" if isinstance(error, RedisError) else "database",
              type(error).__name__)
    return problem(503, "service_unavailable", "The service is unavailable. Try again shortly.",
                   headers={"Retry-After": "5"})


def _unexpected(error: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.path)
    return problem(500, "internal_error", "Something went wrong on our side.")


def register_api_errors(blueprint: Blueprint) -> None:
    blueprint.register_error_handler(AuthError, _auth_error)
    blueprint.register_error_handler(RateLimitExceeded, _rate_limited)
    blueprint.register_error_handler(HTTPException, http_error)
    blueprint.register_error_handler(OperationalError, _dependency_unavailable)
    blueprint.register_error_handler(RedisError, _dependency_unavailable)
    blueprint.register_error_handler(Exception, _unexpected)
