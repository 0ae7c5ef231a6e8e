"""Every JSON endpoint answers hostile input with a 4xx problem body and changes nothing."""

import json

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import AuditEvent, AuthSession, RefreshToken, User

ENDPOINTS = {
    "/api/v2/auth/signup": {"email": "new@example.com", "password": "a long enough passphrase",
                            "full_name": "New"},
    "/api/v2/auth/login": {"email": "ada@example.com", "password": "correct horse battery staple"},
    "/api/v1/auth/login": {"email": "ada@example.com", "password": "correct horse battery staple",
                           "captcha_token": ""},
    "/api/v2/auth/refresh": {"refresh_token": "x" * 43},
    "/api/v1/auth/refresh": {"refresh_token": "x" * 43},
}


def raw_bodies(valid):
    """(name, bytes, content type): bodies that are not a valid request, whatever the fields."""
    field = next(iter(valid))
    return [
        ("malformed json", b'{"email": ', "application/json"),
        ("invalid utf-8", b'{"email": "\xff\xfe"}', "application/json"),
        ("array", b"[]", "application/json"),
        ("null", b"null", "application/json"),
        ("string", b'"hello"', "application/json"),
        ("empty", b"", "application/json"),
        ("deep nesting", b"[" * 30_000 + b"]" * 30_000, "application/json"),
        ("form encoded", b"email=a%40b.c&password=x", "application/x-www-form-urlencoded"),
        ("text/plain json", json.dumps(valid).encode(), "text/plain"),
        ("unknown field", json.dumps({**valid, "is_admin": True}).encode(), "application/json"),
        ("missing field", json.dumps({}).encode(), "application/json"),
        ("wrong type: number", json.dumps({**valid, field: 12345}).encode(), "application/json"),
        ("wrong type: list", json.dumps({**valid, field: ["a"]}).encode(), "application/json"),
        ("wrong type: null", json.dumps({**valid, field: None}).encode(), "application/json"),
        ("NaN", json.dumps({**valid, field: float("nan")}).encode(), "application/json"),
        ("NUL byte", json.dumps({**valid, field: "a\x00b"}).encode(), "application/json"),
        ("lone surrogate", b'{"' + field.encode() + b'": "\\ud800"}', "application/json"),
        ("overlong string", json.dumps({**valid, field: "a" * 60_000}).encode(),
         "application/json"),
        ("1 MB body", b'{"email": "' + b"a" * 1_000_000 + b'"}', "application/json"),
    ]


def counts(app):
    with app.app_context():
        return [db.session.scalar(select(func.count()).select_from(model))
                for model in (User, AuthSession, RefreshToken, AuditEvent)]


CASES = [(path, name, body, ctype)
         for path, valid in ENDPOINTS.items()
         for name, body, ctype in raw_bodies(valid)]


@pytest.mark.parametrize(("path", "name", "body", "content_type"), CASES,
                         ids=[f"{p}:{n}" for p, n, _, _ in CASES])
def test_hostile_bodies_get_a_problem_and_change_nothing(app, client, user, path, name, body,
                                                         content_type):
    before = counts(app)
    response = client.post(path, data=body, content_type=content_type)
    assert 400 <= response.status_code < 500, (name, response.status_code, response.data[:300])
    assert response.mimetype == "application/problem+json"
    problem = response.get_json()
    assert problem["status"] == response.status_code
    assert {"type", "title", "status", "code", "detail"} <= set(problem)
    assert b"Traceback" not in response.data
    assert counts(app) == before


def test_an_oversized_body_is_413_payload_too_large(client):
    response = client.post("/api/v2/auth/login", data=b"{" + b" " * 70_000 + b"}",
                           content_type="application/json")
    assert response.status_code == 413
    assert response.get_json()["code"] == "payload_too_large"


def test_wrong_type_errors_point_at_the_field(client):
    response = client.post("/api/v2/auth/login", json={"email": 5, "password": "x"})
    assert response.get_json()["errors"] == [
        {"pointer": "#/email", "detail": "Input should be a valid string"}]


def test_a_field_with_a_nul_byte_is_refused_without_echoing_it(client):
    response = client.post("/api/v2/auth/signup", json={
        "email": "a@example.com", "password": "a long enough passphrase",
        "full_name": "Robert'); DROP TABLE users;--\x00"})
    assert response.status_code == 422
    assert b"DROP TABLE" not in response.data


@pytest.mark.parametrize("provider", ["%00", "git%0ahub", "%7f"])
def test_a_control_character_in_a_provider_path_is_a_404_problem(client, user, login, provider):
    """It never reaches the database (PostgreSQL cannot compare a NUL: that was a 500)."""
    token = login(user)["access_token"]
    response = client.delete(f"/api/v2/auth/providers/{provider}",
                             headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 404 and response.get_json()["code"] == "not_found"
