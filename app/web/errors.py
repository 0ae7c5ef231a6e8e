"""Errors, answered alike by every surface: the 429 of a rate limit, the 503 of a database or Redis
that does not answer, and the 500 of anything unexpected are decided here once; each surface
only renders them (`Failure`). Machine-facing paths answer with problem bodies (RFC 9457,
application/problem+json), never HTML and never a trace; the hosted pages with HTML pages."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from flask import Blueprint, Response, jsonify, request
from flask.typing import ResponseReturnValue
from flask_limiter.errors import RateLimitExceeded
from redis import RedisError
from sqlalchemy.exc import OperationalError
from werkzeug.exceptions import HTTPException

from app.domain.errors import AuthError
from app.domain.tokens.errors import BearerError, InsufficientScope
from app.web import ratelimits

log = logging.getLogger("svc_auth.web")

API_PREFIX = "/api/"
# Paths whose errors are problem bodies: the API, and the machine-facing endpoints beside it.
MACHINE_PREFIXES = (API_PREFIX, "/.well-known/", "/health", "/metrics")
DEPENDENCY_RETRY_AFTER = 5

# Stable codes for the HTTP errors raised outside our own views.
_HTTP_CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
    405: "method_not_allowed", 406: "not_acceptable", 413: "payload_too_large",
    415: "unsupported_media_type", 429: "rate_limited", 500: "internal_error",
    503: "service_unavailable",
}


@dataclass(frozen=True)
class Failure:
    """An error as every surface answers it; the surface chooses the words and the format."""

    status: int
    code: str
    retry_after: int | None = None
    headers: dict[str, str] = field(default_factory=dict)


Render = Callable[[Failure], ResponseReturnValue]


def register_failures(blueprint: Blueprint, render: Render) -> None:
    """The 429, 503 and 500 handlers, the same for every surface, rendered by `render`."""
    blueprint.register_error_handler(
        RateLimitExceeded,
        lambda _error: render(_too_many(ratelimits.retry_after())))
    for unavailable in (OperationalError, RedisError):
        blueprint.register_error_handler(
            unavailable, lambda error: render(_dependency_unavailable(error)))
    blueprint.register_error_handler(Exception, lambda error: render(_unexpected(error)))


def _too_many(retry_after: int) -> Failure:
    return Failure(429, "rate_limited", retry_after, {"Retry-After": str(retry_after)})


def _dependency_unavailable(error: Exception) -> Failure:
    """The database, or Redis when rate limits fail closed, does not answer."""
    log.error("%s unavailable: %s", "redis" if isinstance(error, RedisError) else "database",
              type(error).__name__)
    return _unavailable()


def _unavailable() -> Failure:
    return Failure(503, "service_unavailable", DEPENDENCY_RETRY_AFTER,
                   {"Retry-After": str(DEPENDENCY_RETRY_AFTER)})


def dependency_problem() -> Response:
    """The 503 problem of a database that stopped answering after the view had (the audit of an
    admin API read: app/web/trail.py)."""
    return _failure_problem(_unavailable())


def _unexpected(_error: Exception) -> Failure:
    log.exception("unhandled error on %s %s", request.method, request.path)
    return Failure(500, "internal_error")


# Problem bodies ------------------------------------------------------------------------------

def problem_body(status: int, code: str, detail: str, **extra: Any) -> dict[str, Any]:
    """An RFC 9457 problem body, as every answer and the OpenAPI document's examples have it."""
    return {"type": "about:blank", "title": HTTPStatus(status).phrase, "status": status,
            "code": code, "detail": str(detail), **extra}


def problem(status: int, code: str, detail: str, *, headers: dict[str, str] | None = None,
            **extra: Any) -> Response:
    response = jsonify(problem_body(status, code, detail, **extra))
    response.status_code = status
    response.mimetype = "application/problem+json"
    response.headers["Cache-Control"] = "no-store"
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


_PROBLEM_DETAIL = {
    429: "Too many attempts. Try again later.",
    500: "Something went wrong on our side.",
    503: "The service is unavailable. Try again shortly.",
}


def _failure_extra(failure: Failure) -> dict[str, Any]:
    return {"retry_after": failure.retry_after} if failure.status == 429 else {}


def failure_body(failure: Failure) -> dict[str, Any]:
    """The problem body of `failure` (the OpenAPI document's examples)."""
    return problem_body(failure.status, failure.code, _PROBLEM_DETAIL[failure.status],
                        **_failure_extra(failure))


def _failure_problem(failure: Failure) -> Response:
    return problem(failure.status, failure.code, _PROBLEM_DETAIL[failure.status],
                   headers=failure.headers, **_failure_extra(failure))


def _auth_error(error: AuthError) -> Response:
    headers = {"Retry-After": str(error.retry_after)} if error.retry_after else {}
    if isinstance(error, InsufficientScope):
        headers["WWW-Authenticate"] = (
            f'Bearer realm="svc-auth", error="insufficient_scope", scope="{error.scope}"')
    elif isinstance(error, BearerError):
        headers["WWW-Authenticate"] = (
            'Bearer realm="svc-auth"' if error.code == "missing_token"
            else f'Bearer realm="svc-auth", error="invalid_token", error_description="{error.code}"'
        )
    return problem(error.status, error.code, error.detail, headers=headers, **error.members())


def http_problem_body(status: int, method: str) -> dict[str, Any]:
    """The problem body of an HTTP error raised outside our views (the document's examples)."""
    return problem_body(status, _HTTP_CODES[status], _http_detail(status, method))


def _http_detail(status: int, method: str, fallback: str | None = None) -> str:
    return {
        404: "There is nothing at this address.",
        405: f"{method} is not allowed here.",
        413: "The request body is larger than 64 KiB.",
    }.get(status, fallback or "The request could not be processed.")


def http_error(error: HTTPException) -> Response:
    status = error.code or 500
    detail = _http_detail(status, request.method, error.description)
    allowed = getattr(error, "valid_methods", None)
    headers = {"Allow": ", ".join(allowed)} if allowed else {}
    return problem(status, _HTTP_CODES.get(status, "http_error"), detail, headers=headers)


def register_problem_errors(blueprint: Blueprint) -> None:
    """Every error of a machine-facing blueprint as a problem body."""
    register_failures(blueprint, _failure_problem)
    blueprint.register_error_handler(AuthError, _auth_error)
    blueprint.register_error_handler(HTTPException, http_error)


def problem_blueprint(name: str, url_prefix: str | None = None) -> Blueprint:
    """A blueprint of machine-facing endpoints: every error it raises is a problem body."""
    blueprint = Blueprint(name, __name__, url_prefix=url_prefix)
    register_problem_errors(blueprint)
    return blueprint
