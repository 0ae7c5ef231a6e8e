"""Limits on the hosted pages: a browser that signed in before is not kept out by strangers; a
password change has its own per-account limit; signed-in actions are counted per account;
single sign-on hands out a bounded number of codes per browser session."""

from __future__ import annotations

import re

import pytest

from tests.support.pages import csrf_token, submit
from tests.support.rows import handoff_codes as codes
from tests.support.sites import PAGE_SITES, SYMBOLS

pytestmark = pytest.mark.app_settings("pages")

NEW = "a brand new passphrase"
LIMITS = {"CLIENT_SITES": PAGE_SITES, "RATELIMIT_ENABLED": True,
          "LIMIT_LOGIN": "1000 per minute", "LIMIT_LOGIN_IP": "1000 per minute",
          "LIMIT_LOGIN_FAILURES": "4 per day", "LIMIT_PASSWORD_CHANGE_FAILURES": "3 per hour",
          "LIMIT_FORGOT": "2 per hour", "LIMIT_SSO": "3 per minute"}


@pytest.fixture
def settings():
    return dict(LIMITS)


def from_address(client, ip):
    client.environ_base["REMOTE_ADDR"] = ip
    return client


def sign_in(client, account, password=None):
    return submit(client, "/login", {"email": account.email,
                                     "password": password or account.password})


def sign_out(client):
    assert submit(client, "/logout", {}, token_from="/account").status_code == 302


def strangers_fail(app, email, count):
    for i in range(count):
        stranger = from_address(app.test_client(), f"203.0.113.{i}")
        assert submit(stranger, "/login", {"email": email, "password": "guess"}
                      ).status_code == 401


# A browser that signed in before ------------------------------------------------------------

def device_cookie(client):
    return client.get_cookie("svc_device")


def test_strangers_do_not_keep_the_owner_out_of_a_browser_she_signed_in_with(app, client, user):
    assert sign_in(client, user).status_code == 302
    sign_out(client)
    strangers_fail(app, user.email, 4)

    from_address(client, "198.51.100.99")  # the same browser, on another network
    assert sign_in(client, user).headers["Location"] == "/account"

    elsewhere = from_address(app.test_client(), "192.0.2.1")  # a browser never signed in
    refused = sign_in(elsewhere, user)
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 3600
    assert b"Try again in 24 hours, or reset your password." in refused.data


def test_the_device_cookie_names_no_one_and_only_vouches_for_its_own_account(app, client,
                                                                             make_user):
    ada, bob = make_user("ada@example.com"), make_user("bob@example.com")
    sign_in(client, bob)
    sign_out(client)
    cookie = device_cookie(client)
    assert cookie.http_only and cookie.same_site == "Lax"
    assert bob.email not in cookie.value and bob.id not in cookie.value
    assert re.fullmatch(r"1\.[\w-]{22}\.[\w-]{22}", cookie.value)  # a random id and its MAC
    strangers_fail(app, ada.email, 4)
    assert sign_in(client, ada).status_code == 429  # signed in here as Bob, never as Ada


def test_a_forged_device_cookie_is_worth_nothing(app, client, user):
    sign_in(app.test_client(), user)
    strangers_fail(app, user.email, 4)
    client.set_cookie("svc_device", "1." + "A" * 22 + "." + "B" * 22)
    assert sign_in(client, user).status_code == 429


def test_wrong_passwords_from_a_known_browser_still_count(app, client, user):
    sign_in(client, user)
    sign_out(client)
    strangers_fail(app, user.email, 4)
    statuses = [sign_in(client, user, "guess").status_code for _ in range(6)]
    assert statuses == [401] * 5 + [429]  # its own delays, after LOGIN_DELAY_AFTER (5)


# Password change ----------------------------------------------------------------------------

def change_password(client, current):
    return submit(client, "/account/password",
                  {"current_password": current, "new_password": NEW}, token_from="/account")


def test_password_changes_have_a_per_account_failure_limit(app, signed_in, user, make_user):
    """Someone with a signed-in browser guesses the current password, from many addresses."""
    for i in range(3):
        assert change_password(from_address(signed_in, f"203.0.113.{i}"), "guess"
                               ).status_code == 401
    refused = change_password(from_address(signed_in, "203.0.113.9"), user.password)
    assert refused.status_code == 429 and "Retry-After" in refused.headers

    bob = make_user("bob@example.com")
    other = app.test_client()
    sign_in(other, bob)
    assert change_password(other, bob.password).status_code == 302  # another account: fine


# Signed-in actions are counted per account --------------------------------------------------

def test_resend_confirmation_is_counted_per_account(app, signed_in, make_user):
    def resend(client):
        return client.post("/account/confirm-email",
                           data={"csrf_token": csrf_token(client, "/account")}).status_code

    assert [resend(signed_in) for _ in range(3)] == [302, 302, 429]
    bob = make_user("bob@example.com")
    other = app.test_client()
    sign_in(other, bob)
    assert resend(other) == 302


# Single sign-on -----------------------------------------------------------------------------


def test_single_sign_on_hands_out_a_bounded_number_of_codes_per_session(app, signed_in, user):
    for _ in range(3):
        assert signed_in.get("/login?callback=symbols").headers["Location"].startswith(SYMBOLS)
    refused = signed_in.get("/login?callback=symbols")
    assert refused.status_code == 429 and "Location" not in refused.headers
    assert re.search(rb"Try again in \d+ seconds", refused.data)
    assert codes(app) == 3

    other = app.test_client()  # another browser session of the same account has its own
    sign_in(other, user)
    assert other.get("/login?callback=symbols").headers["Location"].startswith(SYMBOLS)


def test_requests_that_issue_no_code_are_not_counted(app, signed_in):
    for _ in range(5):
        assert signed_in.get("/login?callback=symbols&prompt=login").status_code == 200
        assert app.test_client().get("/login?callback=symbols").status_code == 200
    assert signed_in.get("/login?callback=symbols").status_code == 302


class TestOverHttps:
    @pytest.fixture
    def settings(self):
        return {**LIMITS, "PUBLIC_URL": "https://auth.example"}

    def test_the_device_cookie_is_host_prefixed_and_secure(self, client, user):
        client.environ_base["wsgi.url_scheme"] = "https"
        response = sign_in(client, user)
        [device] = [header for header in response.headers.getlist("Set-Cookie")
                    if header.startswith("__Host-svc_device=")]
        assert "Secure" in device and "HttpOnly" in device and "SameSite=Lax" in device
        assert "Path=/" in device and "Domain" not in device
