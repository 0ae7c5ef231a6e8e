"""The error layer: problem+json for every status under /api/, never HTML, never a trace."""

import pytest
from sqlalchemy.exc import OperationalError

from app import create_app
from app.domain.accounts import accounts
from app.version import VERSION
from tests.support.api import assert_problem


def test_an_unknown_api_path_is_a_404_problem(client):
    assert_problem(client.get("/api/v2/nothing-here"), 404, "not_found")


def test_a_wrong_method_is_a_405_problem_with_allow(client):
    response = client.get("/api/v2/auth/login")
    assert_problem(response, 405, "method_not_allowed")
    assert "POST" in response.headers["Allow"]


def test_no_debug_console(client):
    assert client.get("/console").status_code == 404


def test_an_unexpected_error_is_a_generic_500_problem(client, monkeypatch, caplog):
    def explode(*args, **kwargs):
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(accounts, "authenticate", explode)
    response = client.post("/api/v2/auth/login", json={"email": "a@b.c", "password": "x"})
    body = assert_problem(response, 500, "internal_error")
    assert "secret internal detail" not in response.get_data(as_text=True)
    assert body["detail"] == "Something went wrong on our side."
    assert "secret internal detail" in caplog.text  # the operator still learns what happened


def test_a_database_outage_is_a_503_problem(client, monkeypatch):
    def unreachable(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("connection refused"))

    monkeypatch.setattr(accounts, "authenticate", unreachable)
    response = client.post("/api/v2/auth/login", json={"email": "a@b.c", "password": "x"})
    assert_problem(response, 503, "service_unavailable")
    assert response.headers["Retry-After"]


def test_health_is_ok(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "version": VERSION}


def test_health_is_503_when_the_database_is_unreachable(tmp_path):
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/missing/dir/db.sqlite"})
    response = app.test_client().get("/health")
    assert_problem(response, 503, "service_unavailable")


@pytest.mark.parametrize("path", ["/api/v2/auth/verify", "/health", "/.well-known/jwks.json"])
def test_security_headers_are_on_every_response(client, path):
    headers = client.get(path).headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert headers["Strict-Transport-Security"].startswith("max-age=31536000")


def test_issuer_metadata_points_at_the_jwks(client):
    metadata = client.get("/.well-known/openid-configuration").get_json()
    assert metadata["issuer"] == "http://127.0.0.1:5000"
    assert metadata["jwks_uri"] == "http://127.0.0.1:5000/.well-known/jwks.json"
    assert client.get("/.well-known/jwks.json").get_json()["keys"][0]["alg"] == "ES256"
