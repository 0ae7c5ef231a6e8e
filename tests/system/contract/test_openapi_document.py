"""The published OpenAPI document: valid, complete, and built from the validating schemas."""

import re

import pytest
from openapi_spec_validator import validate

from app.api import admin_schemas, schemas
from app.api.openapi import OPERATIONS
from app.api.reference import DIST, VERSION
from app.web.headers import CONTENT_SECURITY_POLICY


def test_the_document_is_valid_openapi_3_1(client):
    document = client.get("/api/openapi.json").get_json()
    assert document["openapi"] == "3.1.0"
    validate(document)


def test_every_api_route_is_documented_and_nothing_else(app, client):
    """The document cannot drift from the routes: same paths and methods, both ways."""
    documented = {(method.upper(), path)
                  for path, methods in client.get("/api/openapi.json").get_json()["paths"].items()
                  for method in methods}
    routed = set()
    for rule in app.url_map.iter_rules():
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", r"{\1}", rule.rule)
        if path.startswith(("/api/v1", "/api/v2", "/api/admin", "/.well-known", "/health",
                            "/oauth2")):
            routed |= {(m, path) for m in rule.methods - {"HEAD", "OPTIONS"}}
    assert documented == routed


def test_request_bodies_are_the_validating_models(client):
    document = client.get("/api/openapi.json").get_json()
    for op in OPERATIONS:
        if op.body is not None:
            module = admin_schemas if op.admin_scope else schemas
            assert getattr(module, op.body.__name__) is op.body
            documented = document["components"]["schemas"][op.body.__name__]
            assert documented == op.body.model_json_schema(
                ref_template="#/components/schemas/{model}")


def test_every_error_response_is_a_problem(client):
    """The API's errors are problem details; the OpenID Connect endpoints' are RFC 6749's, or
    pages for a browser."""
    document = client.get("/api/openapi.json").get_json()
    oauth_error = {"application/json": {"$ref": "#/components/schemas/OAuthError"}}
    for path, methods in document["paths"].items():
        for op in methods.values():
            for status, response in op["responses"].items():
                if int(status) >= 400 and path.startswith("/oauth2/"):
                    schemas = {media: spec["schema"] for media, spec in response["content"].items()}
                    assert schemas in (oauth_error, {"text/html": {"type": "string"}}), (path,
                                                                                         status)
                elif int(status) >= 400:
                    assert "application/problem+json" in response["content"], (path, status)
            if op.get("security"):
                assert "401" in op["responses"]


REFERENCE_POLICY = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
                    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                    "object-src 'none'")


def test_the_reference_page_runs_only_our_scripts_and_reads_without_them(client):
    """Swagger UI and its starter, from this origin, under a policy of its own; without script
    the document is on the page as HTML (in <noscript>), descriptions and examples too."""
    page = client.get("/api/docs")
    assert page.status_code == 200
    assert page.headers["Content-Security-Policy"] == REFERENCE_POLICY
    scripts = re.findall(r"<script\b[^>]*>", page.text)
    assert scripts == [f'<script src="/api/docs/swagger-ui/{VERSION}/swagger-ui-bundle.js" defer>',
                       '<script src="/static/api_reference.js" defer>'], scripts
    static = page.text[page.text.index("<noscript>\n"):]
    assert "POST /api/v2/auth/exchange-code" in static and 'id="schema-Problem"' in static
    assert "complete it with POST /api/v2/auth/mfa" in static  # a description
    assert '"code": "invalid_mfa_token"' in static  # an error's example


def test_every_other_page_keeps_its_policy(client):
    assert client.get("/forgot-password").headers["Content-Security-Policy"] == \
        CONTENT_SECURITY_POLICY


def test_the_pages_files_come_from_the_package_with_their_licence(client):
    for name, kind in (("swagger-ui-bundle.js", "text/javascript"), ("swagger-ui.css", "text/css"),
                       ("LICENSE", "text/plain")):
        answer = client.get(f"/api/docs/swagger-ui/{VERSION}/{name}")
        assert answer.status_code == 200 and answer.mimetype == kind, (name, answer.mimetype)
        assert answer.data == (DIST / name).read_bytes()
    assert "Apache License" in client.get(f"/api/docs/swagger-ui/{VERSION}/LICENSE").text
    cached = client.get(f"/api/docs/swagger-ui/{VERSION}/swagger-ui.css").headers["Cache-Control"]
    assert "immutable" in cached and "max-age=31536000" in cached


@pytest.mark.parametrize("path", ["/api/docs/swagger-ui/0.0.1/swagger-ui-bundle.js",
                                  "/api/docs/swagger-ui/{version}/index.html",
                                  "/api/docs/swagger-ui/{version}/oauth2-redirect.html",
                                  "/api/docs/swagger-ui/{version}/..%2FVERSION"])
def test_only_the_files_the_page_loads_are_served(client, path):
    assert client.get(path.format(version=VERSION)).status_code == 404
