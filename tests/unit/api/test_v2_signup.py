"""POST /api/v2/auth/signup."""

from sqlalchemy import func, select

from app.extensions import db
from app.models import User
from tests.support.http import bearer


def signup(client, email="grace@example.com", password="a long enough passphrase", **extra):
    return client.post("/api/v2/auth/signup",
                       json={"email": email, "password": password, **extra})


def test_signup_answers_201_with_the_login_response(client):
    response = signup(client, full_name="Grace Hopper")
    assert response.status_code == 201
    body = response.get_json()
    assert set(body) == {"access_token", "refresh_token", "token_type", "expires_in", "user"}
    assert body["token_type"] == "bearer" and body["expires_in"] == 3600
    assert body["user"]["email"] == "grace@example.com"
    assert body["user"]["full_name"] == "Grace Hopper"
    assert body["user"]["plan"] == "free"
    assert response.headers["Cache-Control"] == "no-store"
    verify = client.get("/api/v2/auth/verify", headers=bearer(body["access_token"]))
    assert verify.status_code == 200


def test_full_name_is_optional(client):
    assert signup(client).get_json()["user"]["full_name"] == ""


def test_a_registered_email_in_any_case_is_409(client):
    assert signup(client, "victim@example.com").status_code == 201
    response = signup(client, "Victim@EXAMPLE.com")
    assert response.status_code == 409
    assert response.get_json()["code"] == "email_taken"


def test_email_is_stored_in_its_canonical_form(client):
    """ASCII letters lower-cased on both sides of the @ (issue 12: one canonical form)."""
    body = signup(client, "Grace@Example.COM").get_json()
    assert body["user"]["email"] == "grace@example.com"


def test_invalid_email_is_422_with_a_pointer(client):
    response = signup(client, "not-an-email")
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["pointer"] == "#/email"


def test_privileged_fields_are_refused_and_nothing_is_created(client, app):
    for field, value in (("plan", "pro"), ("is_admin", True), ("email_verified", True)):
        response = signup(client, **{field: value})
        assert response.status_code == 422
        assert response.get_json()["errors"] == [
            {"pointer": f"#/{field}", "detail": "Extra inputs are not permitted"}]
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(User)) == 0


def test_a_weak_password_says_why_and_is_never_echoed(client):
    response = signup(client, password="password1")
    assert response.status_code == 422
    assert "common" in response.get_json()["errors"][0]["detail"]
    assert b"password1" not in response.data
