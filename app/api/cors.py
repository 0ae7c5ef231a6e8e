"""CORS for the family's own sites' origins only, never a reflection of any Origin: a
third-party client has no business with the family API."""

from __future__ import annotations

from flask import Response, request

from app.domain.clients.origins import is_family_origin
from app.web.headers import add_vary

CORS_PATHS = ("/api/", "/static/svc-auth.js")


def add_cors_headers(response: Response) -> Response:
    if not request.path.startswith(CORS_PATHS):
        return response
    add_vary(response, "Origin")
    untrusted_origin = request.environ.get("HTTP_ORIGIN")
    if untrusted_origin and is_family_origin(untrusted_origin):
        response.headers["Access-Control-Allow-Origin"] = untrusted_origin
        response.headers["Access-Control-Expose-Headers"] = (
            "Retry-After, WWW-Authenticate, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset")
        if request.method == "OPTIONS":
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, DELETE"
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
            response.headers["Access-Control-Max-Age"] = "600"
    return response
