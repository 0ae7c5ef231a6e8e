"""Email and password login on v1 and v2, and the enumeration properties of its failures.

POST /api/v2/auth/signup saves the language the request's Accept-Language names (RFC 4647
lookup), when it names one of ours: the first mail is in it. Without one, nothing is saved and
the mails are in English, as before."""

import pytest

from tests.support.accounts import PASSWORD, saved_language
from tests.support.http import bearer

LOGIN_PATHS = ["/api/v2/auth/login", "/api/v1/auth/login"]


def credentials(account, **extra):
    return {"email": account.email, "password": account.password, **extra}


def test_v2_login_returns_the_login_response(client, user):
    response = client.post("/api/v2/auth/login", json=credentials(user))
    assert response.status_code == 200
    body = response.get_json()
    assert body["user"] == {"id": user.id, "email": user.email, "full_name": "Ada", "plan": "free",
                            "email_verified": False}
    assert body["token_type"] == "bearer"
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Pragma"] == "no-cache"


def test_v1_login_accepts_the_empty_captcha_and_nests_the_tokens(client, user):
    response = client.post("/api/v1/auth/login", json=credentials(user, captcha_token=""))
    assert response.status_code == 200
    body = response.get_json()
    assert body["session"]["access_token"] == body["access_token"]
    assert body["session"]["refresh_token"] == body["refresh_token"]
    assert body["user"]["id"] == user.id


def test_email_is_matched_without_regard_to_case(client, user):
    response = client.post("/api/v2/auth/login",
                           json={"email": "ADA@Example.com", "password": user.password})
    assert response.status_code == 200


def test_every_login_opens_a_new_session_with_fresh_tokens(client, user, login):
    first, second = login(user), login(user)
    assert first["access_token"] != second["access_token"]
    assert first["refresh_token"] != second["refresh_token"]
    sessions = {client.get("/api/v2/auth/verify", headers=bearer(b["access_token"]))
                .get_json()["session_id"] for b in (first, second)}
    assert len(sessions) == 2


def _failure(client, path, email, password):
    response = client.post(path, json={"email": email, "password": password})
    headers = {k: v for k, v in response.headers if k != "X-Request-Id"}  # per request
    return response.status_code, headers, response.data


@pytest.mark.parametrize("path", LOGIN_PATHS)
def test_unknown_email_wrong_password_and_disabled_account_answer_identically(
        client, make_user, path, clock):
    from datetime import UTC, datetime

    make_user("known@example.com")
    make_user("disabled@example.com", disabled_at=datetime.now(UTC))
    make_user("oauth-only@example.com", password_hash=None)
    password = "correct horse battery staple"
    answers = [
        _failure(client, path, "nobody@example.com", password),
        _failure(client, path, "known@example.com", "wrong password here"),
        _failure(client, path, "disabled@example.com", password),
        _failure(client, path, "oauth-only@example.com", password),
        _failure(client, path, "admin", "admin"),
    ]
    assert {status for status, _, _ in answers} == {401}
    assert len({body for _, _, body in answers}) == 1
    assert len({tuple(sorted(headers.items())) for _, headers, _ in answers}) == 1
    assert b'"code":"invalid_credentials"' in answers[0][2]


def test_unknown_email_costs_one_password_verification(app, client, monkeypatch):
    """The timing property, counted rather than timed: an unknown email runs argon2 once,
    exactly as a wrong password does. (bench/ holds the wall-clock comparison.)"""
    from argon2 import PasswordHasher

    calls = []
    original = PasswordHasher.verify
    monkeypatch.setattr(PasswordHasher, "verify",
                        lambda self, *a: calls.append(1) or original(self, *a))
    client.post("/api/v2/auth/login", json={"email": "nobody@example.com", "password": "x" * 9})
    assert len(calls) == 1


def test_login_password_is_never_logged(client, user, caplog):
    caplog.set_level("INFO")
    canary = "canary-password-7f3a"
    client.post("/api/v2/auth/login", json={"email": user.email, "password": canary})
    body = client.post("/api/v2/auth/login", json=credentials(user)).get_json()
    logged = caplog.text
    assert "event=login_failed" in logged and "event=login_succeeded" in logged
    assert canary not in logged and user.password not in logged
    assert body["access_token"] not in logged and body["refresh_token"] not in logged


def _api_sign_up(client, email: str, **headers: str):
    return client.post("/api/v2/auth/signup", json={"email": email, "password": PASSWORD},
                       headers=headers)


def test_an_api_sign_up_in_german_gets_its_first_mail_in_german(app, client, mailbox):
    assert _api_sign_up(client, "anna@example.com",
                    **{"Accept-Language": "de-AT,en;q=0.5"}).status_code == 201
    assert saved_language(app, "anna@example.com") == "de"
    [first] = mailbox.to("anna@example.com")
    assert first["Subject"] == "Bestätigen Sie Ihre E-Mail-Adresse"


@pytest.mark.parametrize("header", [None, "ja", "*", "de;q=2", "x" * 5000])
def test_without_a_language_of_ours_nothing_is_saved(app, client, mailbox, header):
    headers = {"Accept-Language": header} if header is not None else {}
    assert _api_sign_up(client, "eve@example.com", **headers).status_code == 201
    assert saved_language(app, "eve@example.com") is None
    [first] = mailbox.to("eve@example.com")
    assert first["Subject"] == "Confirm your email address"
