"""Captcha on the hosted pages: the widget where it is asked, the CSP widened there alone, and the
same questions as the API (issue 17, items 2, 5 and 6)."""

from __future__ import annotations

import re

import pytest

from app.web.headers import CONTENT_SECURITY_POLICY
from tests.support.accounts import PASSWORD
from tests.support.captcha_standin import (
    captcha_app_settings,  # noqa: F401 (its settings)
    fresh_token,
)
from tests.support.pages import submit
from tests.support.settings import change_settings

FIELD = "cf-turnstile-response"


def shows_widget(page) -> bool:
    return 'class="cf-turnstile" data-sitekey="stand-in-site-key"' in page.text


@pytest.mark.parametrize("path", ["/signup", "/forgot-password"])
def test_pages_that_always_ask_show_the_widget_and_widen_the_csp(client, standin, path):
    page = client.get(path)
    assert shows_widget(page)
    assert f'<script src="{standin.url}/api.js" async defer></script>' in page.text
    policy = page.headers["Content-Security-Policy"]
    assert policy.startswith(CONTENT_SECURITY_POLICY)
    for directive in ("frame-src", "connect-src"):
        assert f"{directive} {standin.url};" in policy + ";"
    # Our own scripts too where there is a password field (the show-password button).
    own = "'self' " if path == "/signup" else ""
    assert f"script-src {own}{standin.url};" in policy


@pytest.mark.parametrize(("path", "own"), [("/login", True), ("/reset-password?token=x", False)])
def test_other_pages_keep_the_strict_csp(client, path, own):
    """No widget and no provider's script: the strict policy, with only our own scripts where
    the page has a password field (the show-password button)."""
    page = client.get(path, follow_redirects=True)
    assert not shows_widget(page)
    assert re.findall(r"<script[^>]*>", page.text) == (
        ['<script src="/static/show-password.js" defer>'] if own else [])
    assert page.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY + (
        "; script-src 'self'" if own else "")


@pytest.mark.parametrize(("provider", "origins"), [
    ("turnstile", ["https://challenges.cloudflare.com"]),
    ("hcaptcha", ["https://hcaptcha.com", "https://*.hcaptcha.com"]),
    ("recaptcha", ["https://www.google.com/recaptcha/", "https://www.gstatic.com/recaptcha/"]),
])
def test_the_csp_opens_to_the_providers_origins_only(app, client, provider, origins):
    change_settings(app, CAPTCHA_PROVIDER=provider, CAPTCHA_SCRIPT_URL=None)
    policy = client.get("/signup").headers["Content-Security-Policy"]
    joined = " ".join(origins)
    assert f"script-src 'self' {joined}; frame-src {joined}; connect-src {joined}" in policy
    assert ("style-src 'self' " + joined in policy) == (provider == "hcaptcha")


def test_signup_page_asks_for_the_captcha(client, mailbox):
    refused = submit(client, "/signup", {"email": "a@example.com", "password": PASSWORD})
    assert refused.status_code == 422 and "complete the check below" in refused.text
    assert shows_widget(refused)
    failed = submit(client, "/signup", {"email": "a@example.com", "password": PASSWORD,
                                        FIELD: fresh_token("fail")})
    assert failed.status_code == 422 and "did not pass" in failed.text
    created = submit(client, "/signup", {"email": "a@example.com", "password": PASSWORD,
                                         FIELD: fresh_token()})
    assert created.status_code == 302


def test_a_weak_password_is_refused_before_the_captcha_is_spent(client, standin):
    page = submit(client, "/signup", {"email": "a@example.com", "password": "password",
                                      FIELD: fresh_token()})
    assert page.status_code == 422 and standin.calls == []


def test_forgot_password_page_asks_for_the_captcha(client, user, mailbox):
    refused = submit(client, "/forgot-password", {"email": user.email})
    assert refused.status_code == 422 and shows_widget(refused)
    sent = submit(client, "/forgot-password", {"email": user.email, FIELD: fresh_token()})
    assert sent.status_code == 202


@pytest.mark.parametrize("path", ["/signup", "/forgot-password"])
def test_a_provider_down_is_a_503_page(client, standin, path):
    standin.down = True
    page = submit(client, path, {"email": "a@example.com", "password": PASSWORD,
                                 FIELD: fresh_token()})
    assert page.status_code == 503 and page.headers["Retry-After"] == "30"
    assert page.mimetype == "text/html"


def test_login_page_shows_the_widget_once_the_email_has_failed(client, user):
    for _ in range(2):
        page = submit(client, "/login", {"email": user.email, "password": "wrong"})
        assert page.status_code == 401 and not shows_widget(page)
    third = submit(client, "/login", {"email": user.email, "password": "wrong"})
    assert third.status_code == 401 and shows_widget(third)  # the next attempt is asked
    assert "script-src" in third.headers["Content-Security-Policy"]
    asked = submit(client, "/login", {"email": user.email, "password": PASSWORD})
    assert asked.status_code == 422 and shows_widget(asked)
    signed_in = submit(client, "/login", {"email": user.email, "password": PASSWORD,
                                          FIELD: fresh_token()})
    assert signed_in.status_code == 302


def test_the_login_form_shows_the_widget_to_an_address_that_failed(client):
    for n in range(3):
        submit(client, "/login", {"email": f"guess{n}@example.com", "password": "wrong"})
    assert shows_widget(client.get("/login"))


def test_login_falls_back_to_the_throttles_when_the_provider_is_down(client, standin, user):
    for _ in range(3):
        submit(client, "/login", {"email": user.email, "password": "wrong"})
    standin.down = True
    page = submit(client, "/login", {"email": user.email, "password": PASSWORD,
                                     FIELD: fresh_token()})
    assert page.status_code == 302


@pytest.mark.parametrize("captcha_mode", ["off"])
def test_off_mode_shows_no_widget_anywhere(client, user):
    for path, own in (("/signup", True), ("/forgot-password", False), ("/login", True)):
        page = client.get(path)
        assert not shows_widget(page)
        assert page.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY + (
            "; script-src 'self'" if own else "")  # the show-password button's, ours
    assert submit(client, "/signup", {"email": "a@example.com",
                                      "password": PASSWORD}).status_code == 302
