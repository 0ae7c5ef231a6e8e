"""Breached passwords refused (app/domain/accounts/breached.py) at every door that sets a
password: v2 sign-up, the hosted sign-up, reset by API and by page, the account page's change
and `flask users create`; through a local stand-in range server (tests/support/password_ranges.py).
(Admin-created and provider-created accounts get no password: nothing to look up.)"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import func, select

from app.extensions import db
from app.models import User
from tests.support.accounts import PASSWORD
from tests.support.pages import submit
from tests.support.password_ranges import (
    BREACHED,
    PADDED,
    RangeStandIn,
    breached_range,  # noqa: F401 (a fixture)
    breached_settings,
    sha1,
)

FRESH = "an unlisted long passphrase"
REASON = "This password has appeared in a data breach"


@pytest.fixture
def settings(breached_range: RangeStandIn) -> dict[str, Any]:  # noqa: F811
    return breached_settings(breached_range)


def accounts_count(app) -> int:
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(User))


def api_signup_with(client, password: str, email: str = "new@example.com"):
    return client.post("/api/v2/auth/signup", json={"email": email, "password": password})


def assert_breached(response, pointer: str = "#/password") -> None:
    assert response.status_code == 422
    body = response.get_json()
    assert body["code"] == "password_breached"
    assert body["errors"] == [{"pointer": pointer, "detail": body["detail"]}]
    assert body["detail"].startswith(REASON)
    assert BREACHED not in response.text and sha1(BREACHED) not in response.text


def test_v2_signup_refuses_a_listed_password_and_creates_nothing(
        app, client, breached_range):  # noqa: F811
    assert_breached(api_signup_with(client, BREACHED))
    assert accounts_count(app) == 0
    assert breached_range.paths == [f"/range/{sha1(BREACHED)[:5]}"]


def test_v2_signup_accepts_an_unlisted_password(client, breached_range):  # noqa: F811
    assert api_signup_with(client, FRESH).status_code == 201
    assert breached_range.paths == [f"/range/{sha1(FRESH)[:5]}"]


def test_padding_lines_are_not_breaches(client, breached_range):  # noqa: F811
    """The stand-in pads its answers with count-0 lines, one of them this password's suffix."""
    assert api_signup_with(client, PADDED).status_code == 201
    assert breached_range.requests[0][1]["add-padding"] == "true"


def test_only_five_hex_characters_of_the_hash_leave_the_service(
        client, breached_range):  # noqa: F811
    api_signup_with(client, BREACHED)
    [(path, headers)] = breached_range.requests
    digest = sha1(BREACHED)
    assert path == "/range/" + digest[:5]
    sent = path + repr(headers)
    assert digest[5:] not in sent and digest[5:].lower() not in sent and BREACHED not in sent


def test_the_local_policy_answers_first_without_a_lookup(
        client, breached_range):  # noqa: F811
    response = api_signup_with(client, "password123")
    assert response.status_code == 422 and response.get_json()["code"] == "invalid_body"
    assert breached_range.paths == []


def test_the_hosted_signup_shows_why_in_the_persons_language(
        app, client, breached_range):  # noqa: F811
    response = submit(client, "/signup", {"email": "new@example.com", "password": BREACHED})
    assert response.status_code == 422
    assert 'id="password-error"' in response.text and REASON in response.text
    client.set_cookie("svc_lang", "de")
    response = submit(client, "/signup", {"email": "new@example.com", "password": BREACHED})
    assert response.status_code == 422 and "Datenleck" in response.text
    assert BREACHED not in response.text and accounts_count(app) == 0
    assert len(breached_range.paths) == 2  # one lookup a sign-up (not one more before the captcha)


def forgot_and_token(client, mailbox, email: str) -> str:
    assert client.post("/api/v2/auth/forgot-password", json={"email": email}).status_code == 202
    return parse_qs(urlsplit(mailbox.last_link(email, "/reset-password")).query)["token"][0]


def test_a_reset_by_api_refuses_a_listed_password_and_the_link_still_works(
        client, user, mailbox):
    token = forgot_and_token(client, mailbox, user.email)
    refused = client.post("/api/v2/auth/reset-password",
                          json={"token": token, "new_password": BREACHED})
    assert_breached(refused, "#/new_password")
    assert client.post("/api/v2/auth/reset-password",
                       json={"token": token, "new_password": FRESH}).status_code == 200


def test_a_reset_by_page_refuses_a_listed_password(client, user, mailbox):
    link = forgot_and_token(client, mailbox, user.email)
    client.get(f"/reset-password?token={link}")
    response = submit(client, "/reset-password", {"new_password": BREACHED})
    assert response.status_code == 422
    assert 'id="new_password-error"' in response.text and REASON in response.text
    assert client.post("/api/v2/auth/login", json={"email": user.email, "password": PASSWORD}
                       ).status_code == 200  # the old password still holds


def test_the_account_page_refuses_a_listed_new_password(client, user):
    assert submit(client, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    response = submit(client, "/account/password",
                      {"current_password": PASSWORD, "new_password": BREACHED},
                      token_from="/account")
    assert response.status_code == 422 and REASON in response.text
    assert client.post("/api/v2/auth/login", json={"email": user.email, "password": PASSWORD}
                       ).status_code == 200


def test_the_cli_refuses_a_listed_password(app):
    made = app.test_cli_runner().invoke(
        args=["users", "create", "new@example.com", "--password", BREACHED])
    assert made.exit_code == 1 and REASON in made.output and BREACHED not in made.output
    assert accounts_count(app) == 0


@pytest.mark.parametrize("failure", ["down", "closed"])
def test_a_failed_lookup_accepts_the_password_and_logs_why(
        app, client, breached_range, caplog, failure):  # noqa: F811
    if failure == "down":
        breached_range.down = True
    else:
        breached_range.stop()
    with caplog.at_level(logging.WARNING, logger="svc_auth.breached_passwords"):
        assert api_signup_with(client, BREACHED).status_code == 201
    [record] = [r for r in caplog.records if r.name == "svc_auth.breached_passwords"]
    assert "lookup failed" in record.getMessage()
    logged = caplog.text
    assert BREACHED not in logged and sha1(BREACHED)[5:] not in logged


class TestHanging:
    @pytest.fixture
    def settings(self, breached_range: RangeStandIn) -> dict[str, Any]:  # noqa: F811
        return breached_settings(breached_range, timeout=0.5)

    def test_a_lookup_that_hangs_is_given_up_after_the_timeout(
            self, client, breached_range):  # noqa: F811
        """The stand-in holds its answer (a listing) until released: the sign-up answering
        while it still holds it is the timeout at work; without one it would wait for the
        release, then refuse."""
        breached_range.hang = True
        assert api_signup_with(client, BREACHED).status_code == 201
        assert breached_range.paths == [f"/range/{sha1(BREACHED)[:5]}"]
        breached_range.release()


class TestOff:
    @pytest.fixture
    def settings(self) -> dict[str, Any]:
        return {"BREACHED_PASSWORDS_URL": ""}

    def test_an_empty_setting_makes_no_call(
            self, client, breached_range):  # noqa: F811
        assert api_signup_with(client, BREACHED).status_code == 201
        assert breached_range.paths == []
