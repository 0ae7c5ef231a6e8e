"""The wire format of issue 17 (item 3) in the published OpenAPI document, and the real answers
checked against it."""

from __future__ import annotations

import pytest

from app.api.documents import Problem
from tests.support.accounts import PASSWORD
from tests.support.captcha_standin import (
    captcha_app_settings,  # noqa: F401 (its settings)
    fresh_token,
)


def test_captcha_token_is_an_optional_field_of_every_asking_body(client):
    schemas = client.get("/api/openapi.json").get_json()["components"]["schemas"]
    for body in ("LoginBody", "V1LoginBody", "SignupBody", "EmailBody"):
        token = schemas[body]["properties"]["captcha_token"]
        assert token["default"] == "" and "captcha_token" not in schemas[body].get("required", [])
        assert "captcha_required" in token["description"]
    for body in ("RefreshBody", "ExchangeCodeBody", "ResetPasswordBody"):
        assert "captcha_token" not in schemas[body]["properties"]


def test_the_problem_documents_the_captcha_codes_and_widget(client):
    schemas = client.get("/api/openapi.json").get_json()["components"]["schemas"]
    problem = schemas["Problem"]["properties"]
    for code in ("captcha_required", "captcha_invalid", "captcha_unavailable"):
        assert code in problem["code"]["description"]
    assert "#/captcha_token" in problem["captcha"]["description"]
    assert set(schemas["CaptchaChallenge"]["properties"]) == {"provider", "site_key"}


@pytest.mark.parametrize("token", ["", "fail-token"])
def test_the_answers_match_the_document(client, token):
    response = client.post("/api/v2/auth/signup", json={
        "email": "a@example.com", "password": PASSWORD, "captcha_token": token})
    problem = Problem.model_validate(response.get_json())
    assert problem.captcha is not None and problem.captcha.provider == "turnstile"


def test_an_unknown_field_is_still_refused(client):
    response = client.post("/api/v2/auth/signup", json={
        "email": "a@example.com", "password": PASSWORD, "captcha_token": fresh_token(),
        "captcha": "x"})
    assert response.status_code == 422 and response.get_json()["code"] == "invalid_body"
