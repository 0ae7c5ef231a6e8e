"""Signing in with a mailed code through v2 (POST /api/v2/auth/email-code and .../verify): the
same answer for every address, the login response or mfa_required, `invalid_code` for a wrong,
used or expired code, tries bounded per code, the throttles, and the switches that turn it off."""

from __future__ import annotations

from typing import Any

import jwt
import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.domain.accounts import email_codes
from app.extensions import db
from app.models import AuditEvent, EmailCode, User
from tests.support import races
from tests.support.accounts import OWNED, Account
from tests.support.apps import Mailbox
from tests.support.email_codes import ask, mailed_code, verify
from tests.support.second_factors import code_at, enrolled_user
from tests.support.settings import change_settings


@pytest.fixture
def settings() -> dict[str, Any]:
    return {**races.POOL}


def _claims(token: str) -> dict[str, Any]:
    return jwt.decode(token, options={"verify_signature": False})


def _signed_in_with_code(client: FlaskClient, mailbox: Mailbox, email: str) -> Any:
    assert ask(client, email).status_code == 202
    return verify(client, email, mailed_code(mailbox, email))


def test_the_answer_is_the_same_for_known_unknown_and_disabled_addresses(
        app: Flask, client: FlaskClient, make_user: Any, mailbox: Mailbox, clock: Any) -> None:
    make_user("ada@example.com")
    make_user("off@example.com", disabled_at=clock.now)
    answers = [ask(client, email) for email in
               ("ada@example.com", "nobody@example.com", "off@example.com")]
    assert {answer.status_code for answer in answers} == {202}
    assert len({answer.data for answer in answers}) == 1
    assert len({tuple(sorted((k, v) for k, v in answer.headers.items()
                             if k.lower() not in ("date", "x-request-id")))
                for answer in answers}) == 1
    assert [m["To"] for m in mailbox.messages] == ["ada@example.com"]
    with app.app_context():  # no code exists for an address that gets none
        assert [row.email_key for row in db.session.query(EmailCode)] == ["ada@example.com"]


def test_a_malformed_address_is_422(client: FlaskClient) -> None:
    response = ask(client, "not an address")
    assert response.status_code == 422 and response.get_json()["code"] == "invalid_body"


def test_the_code_signs_in_with_tokens_whose_amr_says_otp(
        client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    response = _signed_in_with_code(client, mailbox, user.email)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["user"]["email"] == user.email and body["refresh_token"]
    assert response.headers["Cache-Control"] == "no-store"
    assert _claims(body["access_token"])["amr"] == ["otp"]
    verified = client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {body['access_token']}"})
    assert verified.status_code == 200
    refreshed = client.post("/api/v2/auth/refresh", json={"refresh_token": body["refresh_token"]})
    assert _claims(refreshed.get_json()["access_token"])["amr"] == ["otp"]


def test_a_password_login_keeps_its_minimal_claims(client: FlaskClient, user: Account,
                                                   login: Any) -> None:
    assert "amr" not in _claims(login(user)["access_token"])


def _assert_invalid_code(response: Any) -> None:
    assert response.status_code == 401, response.get_json()
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["code"] == "invalid_code"
    assert "access_token" not in response.get_json()


def test_a_wrong_code_is_invalid_code(client: FlaskClient, user: Account,
                                      mailbox: Mailbox) -> None:
    ask(client, user.email)
    right = mailed_code(mailbox, user.email)
    _assert_invalid_code(verify(client, user.email, str((int(right) + 1) % 10**8).zfill(8)))
    _assert_invalid_code(verify(client, "nobody@example.com", right))
    _assert_invalid_code(verify(client, user.email, "not digits"))
    assert verify(client, user.email, right).status_code == 200


def test_a_used_code_is_invalid_code(client: FlaskClient, user: Account,
                                     mailbox: Mailbox) -> None:
    assert _signed_in_with_code(client, mailbox, user.email).status_code == 200
    _assert_invalid_code(verify(client, user.email, mailed_code(mailbox, user.email)))


def test_a_code_expires_with_its_minutes(client: FlaskClient, user: Account, mailbox: Mailbox,
                                         clock: Any) -> None:
    ask(client, user.email)
    code = mailed_code(mailbox, user.email)
    clock.advance(email_codes.TTL.total_seconds() + 1)
    _assert_invalid_code(verify(client, user.email, code))


def test_a_new_code_kills_the_last(client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    ask(client, user.email)
    first = mailed_code(mailbox, user.email)
    ask(client, user.email)
    second = mailed_code(mailbox, user.email)
    assert first != second
    _assert_invalid_code(verify(client, user.email, first))
    assert verify(client, user.email, second).status_code == 200


def test_parallel_guesses_through_the_api_get_five_tries(
        app: Flask, client: FlaskClient, user: Account, mailbox: Mailbox,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ask(client, user.email)
    right = mailed_code(mailbox, user.email)
    wrong = [str((int(right) + n) % 10**8).zfill(8) for n in range(1, races.BURST + 1)]
    with races.burst(monkeypatch, email_codes, "_code_hash") as burst:
        answers = burst.send(lambda i: verify(app.test_client(), user.email, wrong[i]))
    assert races.statuses(answers) == [401] * races.BURST
    assert burst.checked == email_codes.MAX_ATTEMPTS
    _assert_invalid_code(verify(client, user.email, right))  # the code is spent


def test_an_account_with_an_authenticator_gets_mfa_required(
        app: Flask, client: FlaskClient, make_user: Any, mailbox: Mailbox, clock: Any) -> None:
    account, secret, _ = enrolled_user(app, make_user, clock)
    response = _signed_in_with_code(client, mailbox, account.email)
    body = response.get_json()
    assert response.status_code == 200 and body["mfa_required"] is True, body
    assert "access_token" not in body and "totp" in body["methods"]
    done = client.post("/api/v2/auth/mfa", json={"mfa_token": body["mfa_token"],
                                                  "code": code_at(secret, clock)})
    assert done.status_code == 200, done.get_json()
    assert _claims(done.get_json()["access_token"])["amr"] == ["otp", "mfa"]


def test_a_disabled_account_gets_nothing_and_its_old_code_fails(
        app: Flask, client: FlaskClient, user: Account, mailbox: Mailbox, clock: Any) -> None:
    ask(client, user.email)
    code = mailed_code(mailbox, user.email)
    with app.app_context():
        found = db.session.get(User, user.id)
        assert found is not None
        found.disabled_at = clock.now
        db.session.commit()
    _assert_invalid_code(verify(client, user.email, code))
    ask(client, user.email)
    assert len(mailbox.to(user.email)) == 1


def test_a_code_confirms_an_unconfirmed_address_but_not_its_password(
        app: Flask, client: FlaskClient, make_user: Any, mailbox: Mailbox) -> None:
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    account = make_user("new@example.com")  # signed up by anyone: the address unproved
    refused = client.post("/api/v2/auth/login",
                          json={"email": account.email, "password": account.password})
    assert refused.status_code == 403
    response = _signed_in_with_code(client, mailbox, account.email)
    assert response.status_code == 200, response.get_json()
    with app.app_context():
        found = db.session.get(User, account.id)
        assert found is not None and found.email_verified
        assert found.password_proved_at is None  # whoever set it may not hold the inbox


def test_failures_are_audited_without_the_code(app: Flask, client: FlaskClient, user: Account,
                                               mailbox: Mailbox) -> None:
    ask(client, user.email)
    code = mailed_code(mailbox, user.email)
    verify(client, user.email, "12345678" if code != "12345678" else "87654321")
    with app.app_context():
        events = {row.event for row in db.session.query(AuditEvent)}
        assert {"email_code_sent", "email_code_failed"} <= events
        assert code not in " ".join(str(vars(row)) for row in db.session.query(AuditEvent))


def test_turned_off_by_the_setting(app: Flask, client: FlaskClient, user: Account,
                                   mailbox: Mailbox) -> None:
    ask(client, user.email)
    code = mailed_code(mailbox, user.email)
    change_settings(app, EMAIL_CODE_SIGN_IN=False)
    for response in (ask(client, user.email), verify(client, user.email, code)):
        assert response.status_code == 403
        assert response.get_json()["code"] == "email_code_off"


def test_turned_off_by_the_site_whose_page_calls(app: Flask, client: FlaskClient, user: Account,
                                                 mailbox: Mailbox) -> None:
    change_settings(app, CLIENT_SITES={
        "shop": {"redirect_uris": ["https://shop.example/cb"],
                 "origins": ["https://shop.example"], "email_code_sign_in": False},
        "blog": {"redirect_uris": ["https://blog.example/cb"],
                 "origins": ["https://blog.example"]}})
    refused = client.post("/api/v2/auth/email-code", json={"email": user.email},
                          headers={"Origin": "https://shop.example"})
    assert refused.status_code == 403 and refused.get_json()["code"] == "email_code_off"
    allowed = client.post("/api/v2/auth/email-code", json={"email": user.email},
                          headers={"Origin": "https://blog.example"})
    assert allowed.status_code == 202
    code = mailed_code(mailbox, user.email)
    refused = client.post("/api/v2/auth/email-code/verify",
                          json={"email": user.email, "code": code},
                          headers={"Origin": "https://shop.example"})
    assert refused.status_code == 403
    assert verify(client, user.email, code).status_code == 200


class TestThrottles:
    @pytest.fixture
    def settings(self) -> dict[str, Any]:
        return {"RATELIMIT_ENABLED": True, "LIMIT_FORGOT": "2 per hour",
                "LIMIT_FORGOT_IP": "3 per hour", "LIMIT_LOGIN": "3 per minute"}

    def test_mails_per_recipient_and_per_address(self, client: FlaskClient, user: Account,
                                                 make_user: Any) -> None:
        def from_ip(email: str, ip: str) -> int:
            return int(client.post("/api/v2/auth/email-code", json={"email": email},
                                   environ_base={"REMOTE_ADDR": ip}).status_code)
        assert [from_ip(user.email, f"10.0.0.{n}") for n in (1, 2, 3)] == [202, 202, 429]
        assert [from_ip(f"x{n}@example.com", "10.0.1.1") for n in range(4)] == [202] * 3 + [429]
        limited = client.post("/api/v2/auth/email-code", json={"email": user.email},
                              environ_base={"REMOTE_ADDR": "10.0.0.9"})
        assert limited.headers["Retry-After"] and limited.get_json()["code"] == "rate_limited"

    def test_tries_as_the_password_logins(self, client: FlaskClient, user: Account) -> None:
        statuses = [verify(client, user.email, "12345678").status_code for _ in range(4)]
        assert statuses == [401, 401, 401, 429]


def test_the_password_login_and_the_code_share_one_account_state(
        app: Flask, client: FlaskClient, make_user: Any, mailbox: Mailbox) -> None:
    account = make_user("grace@example.com", **OWNED)
    body = _signed_in_with_code(client, mailbox, account.email).get_json()
    assert body["user"]["id"] == account.id


def test_the_mail_is_in_the_account_s_language(client: FlaskClient, make_user: Any,
                                                mailbox: Mailbox) -> None:
    account = make_user("hanna@example.com", language="de")
    ask(client, account.email)
    message = mailbox.to(account.email)[-1]
    code = mailed_code(mailbox, account.email)
    assert message["Subject"] == f"Ihr Anmeldecode: {code}"
    assert "Geben Sie diesen Code niemandem weiter" in message.get_body(("plain",)).get_content()


def test_the_paths_are_no_provider_s_name(client: FlaskClient) -> None:
    """GET of the new paths is a 405, not an unknown provider called "email-code"."""
    for path in ("/api/v2/auth/email-code", "/api/v2/auth/email-code/verify"):
        response = client.get(path)
        assert response.status_code == 405, (path, response.status_code)
        assert "GET" not in client.options(path).headers["Allow"]
