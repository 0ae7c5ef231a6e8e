"""The published OpenAPI document: valid, complete, and built from the validating schemas."""

import re

from openapi_spec_validator import validate

from app.api import admin_schemas, schemas
from app.api.openapi import OPERATIONS


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
    oauth_error = {"application/json": {"schema": {"$ref": "#/components/schemas/OAuthError"}}}
    for path, methods in document["paths"].items():
        for op in methods.values():
            for status, response in op["responses"].items():
                if int(status) >= 400 and path.startswith("/oauth2/"):
                    assert response["content"] in (oauth_error, {"text/html": {
                        "schema": {"type": "string"}}}), (path, status)
                elif int(status) >= 400:
                    assert "application/problem+json" in response["content"], (path, status)
            if op.get("security"):
                assert "401" in op["responses"]


def test_the_reference_page_renders_the_document_without_script(client):
    page = client.get("/api/docs")
    assert page.status_code == 200
    assert "<script" not in page.text
    assert "POST /api/v2/auth/exchange-code" in page.text and 'id="schema-Problem"' in page.text
