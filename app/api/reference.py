"""The API reference page, /api/docs: Swagger UI over the OpenAPI document, every file from our
own origin. Its files come from the flask-swagger-ui package (a runtime dependency, so that
`pip install` brings them); only the files the page loads are served, from its `dist` folder.
Without script, the page shows the document rendered as HTML."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from flask import Blueprint, Response, abort, render_template, send_from_directory

from app.api import openapi
from app.web.headers import API_REFERENCE_POLICY

DIST = Path(str(resources.files("flask_swagger_ui") / "dist"))
SERVED = frozenset({"swagger-ui-bundle.js", "swagger-ui.css", "LICENSE"})
# The version in the files' addresses: a new release is a new address, so they can be cached.
VERSION = (DIST / "VERSION").read_text(encoding="utf-8").strip().lstrip("v")
YEAR = 365 * 24 * 3600

bp = Blueprint("reference", __name__)


@bp.get("/api/docs")
def page() -> tuple[str, int, dict[str, str]]:
    body = render_template("api_reference.html", doc=openapi.document(), ui_version=VERSION)
    return body, 200, {"Content-Security-Policy": API_REFERENCE_POLICY}


@bp.get("/api/docs/swagger-ui/<version>/<name>")
def swagger_ui(version: str, name: str) -> Response:
    if version != VERSION or name not in SERVED:
        abort(404)
    response = send_from_directory(DIST, name, max_age=YEAR)
    if name == "LICENSE":
        response.mimetype = "text/plain"
    else:
        response.cache_control.immutable = True
    return response
