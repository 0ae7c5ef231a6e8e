"""A password reset or an email confirmation proves the address: the account's failure counters
start again from nothing, so strangers' failures cannot keep the owner out for a day."""

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.support.pages import open_mailed_link, submit

NEW_PASSWORD = "a brand new passphrase"


@pytest.fixture
def settings():
    return {"RATELIMIT_ENABLED": True, "LIMIT_LOGIN": "1000 per minute",
            "LIMIT_LOGIN_IP": "1000 per minute", "LIMIT_LOGIN_FAILURES": "3 per day",
            "LIMIT_PASSWORD_CHANGE_FAILURES": "2 per hour"}


def log_in(client, email, password, ip):
    return client.post("/api/v2/auth/login", json={"email": email, "password": password},
                       environ_base={"REMOTE_ADDR": ip}).status_code


def lock_out(client, email):
    """Strangers fail from three addresses; the owner, from an address of her own that never
    signed in, is refused."""
    assert [log_in(client, email, "guess", f"203.0.113.{i}") for i in range(3)] == [401] * 3
    assert log_in(client, email, "anything", "192.0.2.1") == 429


def test_a_password_reset_clears_the_counters(client, user, mailbox):
    lock_out(client, user.email)
    client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    token = parse_qs(urlsplit(mailbox.last_link(user.email, "/reset-password")).query)["token"]
    assert client.post("/api/v2/auth/reset-password",
                       json={"token": token[0], "new_password": NEW_PASSWORD}).status_code == 200
    assert log_in(client, user.email, NEW_PASSWORD, "192.0.2.1") == 200


def test_an_email_confirmation_clears_the_counters(client, mailbox):
    client.post("/api/v2/auth/signup", json={"email": "new@example.com", "password": NEW_PASSWORD},
                environ_base={"REMOTE_ADDR": "198.51.100.50"})
    lock_out(client, "new@example.com")
    link = mailbox.last_link("new@example.com", "/confirm-email")
    assert open_mailed_link(client, link).status_code == 200
    # (From an address with no session: the sign-up's session would make this one known.)
    assert log_in(client, "new@example.com", NEW_PASSWORD, "192.0.2.2") == 200


def test_a_password_reset_clears_the_password_change_counter(app, client, user, mailbox):
    submit(client, "/login", {"email": user.email, "password": user.password})
    for _ in range(2):
        submit(client, "/account/password", {"current_password": "guess",
                                             "new_password": NEW_PASSWORD}, token_from="/account")
    client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    token = parse_qs(urlsplit(mailbox.last_link(user.email, "/reset-password")).query)["token"]
    client.post("/api/v2/auth/reset-password", json={"token": token[0],
                                                     "new_password": NEW_PASSWORD})
    submit(client, "/login", {"email": user.email, "password": NEW_PASSWORD})
    changed = submit(client, "/account/password", {"current_password": NEW_PASSWORD,
                                                   "new_password": "yet another passphrase"},
                     token_from="/account")
    assert changed.status_code == 302
