"""Email confirmation: the link mailed at sign-up, resending it, and requiring it at login."""

import pytest

from tests.support.accounts import PASSWORD
from tests.support.pages import open_mailed_link


def signup(client, email="new@example.com"):
    return client.post("/api/v2/auth/signup",
                       json={"email": email, "password": "a long enough passphrase"})


def confirm(client, link):
    return open_mailed_link(client, link)


def test_signup_mails_a_confirmation_link_that_works_once(client, mailbox):
    body = signup(client).get_json()
    assert body["user"]["email_verified"] is False
    link = mailbox.last_link("new@example.com", "/confirm-email")
    page = confirm(client, link)
    assert page.status_code == 200 and b"Email confirmed" in page.data
    login = client.post("/api/v2/auth/login", json={"email": "new@example.com",
                                                    "password": "a long enough passphrase"})
    assert login.get_json()["user"]["email_verified"] is True
    again = confirm(client, link)
    assert again.status_code == 400 and b"does not work" in again.data


def test_resend_answers_the_same_for_every_address_and_mails_only_the_unconfirmed(
        client, user, mailbox):
    signup(client, "pending@example.com")
    answers = [client.post("/api/v2/auth/resend-confirmation", json={"email": email})
               for email in ("pending@example.com", "nobody@example.com", user.email)]
    assert {(a.status_code, a.data) for a in answers} == {(202, answers[0].data)}
    assert len(mailbox.to("pending@example.com")) == 2
    assert mailbox.to("nobody@example.com") == []


def test_a_resent_link_replaces_the_first(client, mailbox):
    signup(client)
    first = mailbox.last_link("new@example.com", "/confirm-email")
    client.post("/api/v2/auth/resend-confirmation", json={"email": "new@example.com"})
    second = mailbox.last_link("new@example.com", "/confirm-email")
    assert first != second
    assert confirm(client, first).status_code == 400
    assert confirm(client, second).status_code == 200


def test_a_reset_token_does_not_confirm(client, user, mailbox):
    client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    reset_link = mailbox.last_link(user.email, "/reset-password")
    token = reset_link.split("token=")[1]
    assert client.get(f"/confirm-email?token={token}").status_code == 400


def test_a_confirmation_link_expires(client, mailbox, clock):
    signup(client)
    link = mailbox.last_link("new@example.com", "/confirm-email")
    clock.advance(3 * 24 * 3600 + 1)
    assert confirm(client, link).status_code == 400


class TestRequired:
    @pytest.fixture
    def settings(self):
        return {"REQUIRE_EMAIL_CONFIRMATION": True}

    def test_login_refuses_an_unconfirmed_account_only_with_the_right_password(
            self, client, user):
        right = client.post("/api/v2/auth/login", json={"email": user.email, "password": PASSWORD})
        assert right.status_code == 403 and right.get_json()["code"] == "email_not_confirmed"
        wrong = client.post("/api/v2/auth/login", json={"email": user.email, "password": "nope!"})
        assert wrong.status_code == 401  # no hint for someone without the password

    def test_a_confirmed_account_signs_in(self, client, make_user):
        account = make_user("ok@example.com", email_verified=True)
        response = client.post("/api/v2/auth/login",
                               json={"email": account.email, "password": account.password})
        assert response.status_code == 200


class TestResendRateLimit:
    @pytest.fixture
    def settings(self):
        return {"RATELIMIT_ENABLED": True, "LIMIT_FORGOT": "2 per hour"}

    def test_resend_is_limited_per_email(self, client):
        statuses = [client.post("/api/v2/auth/resend-confirmation",
                                json={"email": "x@example.com"}).status_code for _ in range(3)]
        assert statuses == [202, 202, 429]
