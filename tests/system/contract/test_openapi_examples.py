"""The OpenAPI document's examples (app/api/examples.py): every request body and every documented
error has one, each is valid for its schema, and the errors' are what the service really answers."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from app.api import documents as out
from app.api.openapi import OPERATIONS
from app.domain.errors import AuthError
from app.web.errors import _HTTP_CODES
from tests.support import admin
from tests.support.accounts import PASSWORD

ADMIN = "/api/admin/v1"

# RFC 6749 §5.2, RFC 6750 §3.1 and RFC 9126, as the OpenID Connect endpoints answer them.
OAUTH_ERRORS = {"invalid_request", "invalid_client", "invalid_grant", "unauthorized_client",
                "unsupported_grant_type", "unsupported_response_type", "invalid_scope",
                "invalid_token", "insufficient_scope", "temporarily_unavailable"}


def _codes(kind: type[AuthError]) -> set[str]:
    return {kind.code}.union(*(_codes(sub) for sub in kind.__subclasses__()))


def _document(client: Any) -> dict[str, Any]:
    document: dict[str, Any] = client.get("/api/openapi.json").get_json()
    return document


def _errors(document: dict[str, Any]) -> list[tuple[str, int, str, dict[str, Any]]]:
    """(operationId, status, media type, media) of every error response with a JSON body."""
    return [(op["operationId"], int(status), media, spec)
            for methods in document["paths"].values() for op in methods.values()
            for status, response in op["responses"].items() if int(status) >= 400
            for media, spec in response.get("content", {}).items() if "json" in media]


def _examples(document: dict[str, Any], operation_id: str, status: int,
              code: str) -> list[dict[str, Any]]:
    for found_id, found_status, _media, spec in _errors(document):
        if (found_id, found_status) == (operation_id, status):
            values = [x["value"] for x in spec["examples"].values()]
            matching = [v for v in values if v.get("code", v.get("error")) == code]
            assert matching, f"{operation_id} {status}: no example of {code} in {values}"
            return matching
    raise AssertionError(f"{operation_id} documents no {status}")


def test_every_documented_error_has_an_example_of_its_schema(client):
    document = _document(client)
    known = _codes(AuthError) | set(_HTTP_CODES.values())
    checked = 0
    for operation_id, status, media, spec in _errors(document):
        examples = spec.get("examples")
        assert examples, f"{operation_id} {status} has no example"
        for name, example in examples.items():
            value = example["value"]
            assert example["summary"], (operation_id, status, name)
            if media == "application/problem+json":
                out.Problem.model_validate(value)
                assert value["status"] == status and value["code"] in known, (operation_id, value)
                assert value["title"] and value["detail"], (operation_id, value)
            else:
                out.OAuthError.model_validate(value)
                assert value["error"] in OAUTH_ERRORS, (operation_id, value)
            checked += 1
    assert checked > 150  # every operation, every error status


def test_every_request_body_has_examples_its_model_accepts(client):
    document = _document(client)
    by_id = {op.operation_id: op for op in OPERATIONS}
    bodies = 0
    for methods in document["paths"].values():
        for op in methods.values():
            if "requestBody" not in op:
                continue
            model: type[BaseModel] | None = (by_id[op["operationId"]].body
                                             or by_id[op["operationId"]].form)
            assert model is not None
            for spec in op["requestBody"]["content"].values():
                assert spec["examples"], op["operationId"]
                for example in spec["examples"].values():
                    model.model_validate(example["value"])  # the validating model: strict
                    bodies += 1
    assert bodies >= len([op for op in OPERATIONS if op.body or op.form])


# The examples are the answers: each provoked here and compared whole with its example. --------

def _authorization_of(login: Any, user: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {login(user)['access_token']}"}


def _answers(client: Any, user: Any, login: Any) -> list[tuple[str, str, Any]]:
    """(operationId, code, response) of requests the service refuses."""
    bearer = _authorization_of(login, user)
    ada = {"email": user.email, "password": PASSWORD}
    return [
        ("login", "invalid_credentials",
         client.post("/api/v2/auth/login", json={**ada, "password": "not it at all"})),
        ("login", "invalid_body", client.post("/api/v2/auth/login", json={})),
        ("login", "payload_too_large",
         client.post("/api/v2/auth/login", json={"email": "x" * 70_000, "password": "x"})),
        ("loginV1", "invalid_credentials",
         client.post("/api/v1/auth/login", json={**ada, "password": "not it at all"})),
        ("signup", "email_taken", client.post("/api/v2/auth/signup", json=ada)),
        ("completeMfa", "invalid_mfa_token",
         client.post("/api/v2/auth/mfa", json={"mfa_token": "nope", "code": "123456"})),
        ("refresh", "invalid_token",
         client.post("/api/v2/auth/refresh", json={"refresh_token": "nope"})),
        ("refreshV1", "invalid_token",
         client.post("/api/v1/auth/refresh", json={"refresh_token": "nope"})),
        ("verify", "missing_token", client.get("/api/v2/auth/verify")),
        ("verify", "invalid_token",
         client.get("/api/v2/auth/verify", headers={"Authorization": "Bearer nope"})),
        ("logout", "invalid_body",
         client.post("/api/v2/auth/logout?scope=everything", headers=bearer)),
        ("exchangeCode", "invalid_code", client.post("/api/v2/auth/exchange-code", json={
            "code": "nope", "provider": "google"})),
        ("forgotPassword", "invalid_body",
         client.post("/api/v2/auth/forgot-password", json={"email": "not an address"})),
        ("resetPassword", "invalid_reset_token", client.post(
            "/api/v2/auth/reset-password", json={"token": "nope", "new_password": PASSWORD})),
        ("unlinkProvider", "not_found",
         client.delete("/api/v2/auth/providers/google", headers=bearer)),
        ("changeEmail", "step_up_required", client.post(
            "/api/v2/auth/email", json={"new_email": "ada@new.example"}, headers=bearer)),
        ("changeEmail", "invalid_credentials", client.post(
            "/api/v2/auth/email", json={"new_email": "ada@new.example", "password": "no!"},
            headers=bearer)),
        ("deleteAccount", "step_up_required",
         client.delete("/api/v2/auth/account", json={}, headers=bearer)),
        ("oidcToken", "unsupported_grant_type",
         client.post("/oauth2/token", data={"grant_type": "password"})),
        ("oidcUserinfo", "invalid_token", client.get("/oauth2/userinfo")),
    ]


@pytest.fixture
def settings():
    return {"PLANS": "free,pro,team"}  # as the unknown_plan example says


def _service(app: Any, client: Any, name: str, *scopes: str) -> dict[str, Any]:
    return admin.authorized(admin.token(client, admin.register(app, name, *scopes)))


def _admin_answers(app: Any, client: Any, user: Any) -> list[tuple[str, str, Any]]:
    support = _service(app, client, "support", "users:read", "users:write")
    audit = _service(app, client, "audit", "audit:read")
    users = f"{ADMIN}/users/{user.id}"
    return [
        ("adminUpdateUser", "unknown_plan", client.patch(users, json={"plan": "gold"}, **support)),
        ("adminUpdateUser", "invalid_body",
         client.patch(users, json={"plan": "Gold plan"}, **support)),
        ("adminGetUser", "not_found",
         client.get(f"{ADMIN}/users/00000000-0000-4000-8000-000000000000", **support)),
        ("adminListUsers", "missing_token", client.get(f"{ADMIN}/users")),
        ("adminEndSessions", "insufficient_scope",
         client.delete(f"{users}/sessions", **support)),
        ("adminListDeliveries", "invalid_body",
         client.get(f"{ADMIN}/deliveries?limit=0", **audit)),
    ]


def test_the_error_examples_are_the_answers(app, client, user, login):
    document = _document(client)
    answers = _answers(client, user, login) + _admin_answers(app, client, user)
    for operation_id, code, response in answers:
        examples = _examples(document, operation_id, response.status_code, code)
        assert response.get_json() in examples, (operation_id, code)
    assert len({operation_id for operation_id, _, _ in answers}) >= 20

