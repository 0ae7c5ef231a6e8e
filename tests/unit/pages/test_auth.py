"""The hosted sign-in pages through the test client: forms, targets, single sign-on, CSRF.

The hosted sign-up (app/pages/auth.py) saves the language of its page on the account, so the
first mail (the confirmation) is already in it: the page's language by Accept-Language, by the
picker's cookie, or by the `ui_locales` of the OpenID Connect authorization that waits."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from app.domain.accounts import accounts
from tests.support.pages import csrf_token, submit
from tests.support.sites import FOOTPRINTS, PAGE_SITES, SYMBOLS

pytestmark = pytest.mark.app_settings("pages")

PAGES = ["/login", "/signup", "/forgot-password", "/login?callback=symbols",
         "/login?callback=unknown", "/no-such-page", "/reset-password", "/confirm-email?token=x"]


def landing(response):
    parts = urlsplit(response.headers["Location"])
    return (f"{parts.scheme}://{parts.netloc}{parts.path}",
            {k: v[0] for k, v in parse_qs(parts.query).items()})


@pytest.mark.parametrize("path", PAGES)
def test_every_page_carries_the_security_headers(client, path):
    response = client.get(path)
    assert response.mimetype == "text/html"
    headers = response.headers
    csp = headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    # No script but our own show-password button's, on a page with a password field; nothing
    # inline, nothing it may call.
    assert "default-src 'none'" in csp and "connect-src" not in csp
    scripts = re.findall(r"<script[^>]*>", response.text)
    if 'type="password"' in response.text:
        assert scripts == ['<script src="/static/show-password.js" defer>']
        assert csp.endswith("; script-src 'self'")
    else:
        assert scripts == [] and "script-src" not in csp
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Cache-Control"] == "no-store"
    # Nothing loaded from another origin, and nothing linked but the way back to the site the
    # person came from (its registered home).
    assert not re.search(r'src="(?:[a-z]+:)?//', response.text)
    elsewhere = re.findall(r'href="((?:[a-z]+:)?//[^"]*)"', response.text)
    assert set(elsewhere) <= {"https://symbols.example/"}


@pytest.mark.parametrize(("path", "data"), [
    ("/login", {"email": "a@b.c", "password": "x"}),
    ("/signup", {"email": "a@b.c", "password": "a long passphrase"}),
    ("/forgot-password", {"email": "a@b.c"}),
    ("/reset-password", {"new_password": "a long passphrase"}),
    ("/logout", {}),
])
def test_a_post_without_a_csrf_token_is_a_400_page(client, path, data):
    response = client.post(path, data=data)
    assert response.status_code == 400
    assert b"did not come from this site" in response.data


def test_a_csrf_token_from_another_browser_is_refused(app, client, user):
    foreign = csrf_token(app.test_client(), "/login")
    response = client.post("/login", data={"csrf_token": foreign, "email": user.email,
                                           "password": user.password})
    assert response.status_code == 400


def test_password_sign_in_without_a_target_lands_on_the_account(client, user):
    response = submit(client, "/login", {"email": user.email, "password": user.password})
    assert response.headers["Location"] == "/account"
    assert client.get("/account").status_code == 200


def test_password_sign_in_hands_back_a_code_that_exchanges(client, user):
    response = submit(client, "/login?callback=symbols&state=s1",
                      {"email": user.email, "password": user.password})
    target, params = landing(response)
    assert target == SYMBOLS and params["state"] == "s1" and params["provider"] == "password"
    assert "access_token" not in response.headers["Location"]  # only a one-time code
    tokens = client.post("/api/v2/auth/exchange-code",
                         json={"code": params["code"], "provider": "password"})
    assert tokens.status_code == 200 and tokens.get_json()["user"]["email"] == user.email


def test_a_wrong_password_keeps_the_email_and_never_the_password(client, user):
    response = submit(client, "/login", {"email": user.email, "password": "wrong password!"})
    assert response.status_code == 401
    assert b"Incorrect email or password." in response.data
    assert f'value="{user.email}"'.encode() in response.data
    assert b"wrong password!" not in response.data


def test_the_form_is_the_same_for_an_unknown_email(client, user):
    def page_without_email_and_token(email):
        page = submit(client, "/login", {"email": email, "password": "wrong password!"})
        # Every form's CSRF token (the sign-in's and the language picker's) is signed with the
        # second it was made: two pages a second apart differ there, whatever the address.
        text = re.sub(r'<input[^>]*name="csrf_token"[^>]*>', "", page.text)
        return page.status_code, text.replace(email, "EMAIL")

    assert page_without_email_and_token(user.email) == page_without_email_and_token(
        "nobody@example.com")


def test_single_sign_on_sends_a_signed_in_browser_straight_back(signed_in):
    first = signed_in.get("/login?callback=symbols&state=a")
    second = signed_in.get("/login?redirect_uri=" + FOOTPRINTS + "&state=b")
    (site_a, a), (site_b, b) = landing(first), landing(second)
    assert (site_a, site_b) == (SYMBOLS, FOOTPRINTS)
    assert a["code"] != b["code"] and (a["state"], b["state"]) == ("a", "b")


def test_prompt_login_shows_the_form_even_when_signed_in(signed_in):
    response = signed_in.get("/login?callback=symbols&prompt=login")
    assert response.status_code == 200 and b"Sign in" in response.data


def test_an_unknown_site_is_a_400_page_without_a_redirect(client):
    response = client.get("/login?callback=footprints-evil")
    assert response.status_code == 400 and "Location" not in response.headers
    assert b"not a registered client site" in response.data


def test_a_bad_redirect_uri_is_refused_on_every_entry_page(client):
    for path in ("/login", "/signup", "/forgot-password"):
        response = client.get(path + "?redirect_uri=https://evil.example/cb")
        assert response.status_code == 400 and "Location" not in response.headers


def test_the_target_travels_between_the_entry_pages(client):
    page = client.get("/login?callback=symbols&state=s9").text
    carried = "redirect_uri=https://symbols.example/cb&amp;state=s9"
    assert f'/signup?{carried}"' in page and f'/forgot-password?{carried}"' in page
    assert f'/login/github?{carried}"' in page  # the provider button, too


def test_only_configured_providers_get_a_button(client):
    page = client.get("/login").text
    assert "Sign in with GitHub" in page and "Sign in with Google" not in page


def test_a_hosted_provider_start_remembers_the_target(client):
    with client:
        response = client.get("/login/github?callback=symbols&state=s5")
        assert response.status_code == 302
        from flask import session
        pending = next(iter(session["svc_oauth"].values()))
    assert (pending["mode"], pending["redirect_uri"], pending["client_state"]) == (
        "hosted", SYMBOLS, "s5")


def test_signing_in_replaces_the_session_cookie(client, user):
    """Session fixation: nothing planted in the cookie before sign-in survives it."""
    with client.session_transaction() as planted:
        planted["planted"] = "by someone else"
    submit(client, "/login", {"email": user.email, "password": user.password})
    with client.session_transaction() as after:
        assert "planted" not in after and "_user_id" in after


def test_signup_shows_errors_next_to_their_fields(client, user):
    weak = submit(client, "/signup", {"email": "new@example.com", "password": "password1"})
    assert weak.status_code == 422
    assert b'id="password-error"' in weak.data and b"too common" in weak.data
    assert b'aria-describedby="password-hint password-error"' in weak.data
    taken = submit(client, "/signup", {"email": user.email.upper(),
                                       "password": "a long passphrase"})
    assert taken.status_code == 409 and b'id="email-error"' in taken.data


def test_signup_from_a_site_returns_with_a_code_and_mails_a_confirmation(client, mailbox):
    response = submit(client, "/signup?callback=symbols&state=z",
                      {"email": "new@example.com", "password": "a long passphrase",
                       "full_name": "New"})
    assert landing(response)[0] == SYMBOLS
    assert mailbox.last_link("new@example.com", "/confirm-email")


def test_sign_out_ends_the_browser_session(signed_in):
    token = csrf_token(signed_in, "/account")
    assert signed_in.post("/logout", data={"csrf_token": token}).headers["Location"] == "/login"
    assert signed_in.get("/account").headers["Location"] == "/login"
    assert signed_in.get("/login?callback=symbols").status_code == 200  # the form again


class TestRateLimitedForm:
    @pytest.fixture
    def settings(self):
        return {"CLIENT_SITES": PAGE_SITES, "RATELIMIT_ENABLED": True,
                "LIMIT_LOGIN": "2 per minute"}

    def test_the_page_says_when_to_try_again(self, client, user):
        for _ in range(2):
            submit(client, "/login", {"email": user.email, "password": "wrong password!"})
        response = submit(client, "/login", {"email": user.email, "password": "wrong password!"})
        assert response.status_code == 429
        assert b"Try again in" in response.data and int(response.headers["Retry-After"]) > 0


@pytest.mark.parametrize(("path", "data"), [
    ("/login", {"email": "ada\x00@example.com", "password": "whatever it is"}),
    ("/signup", {"email": "new@example.com", "password": "a long passphrase",
                 "full_name": "Robert\x00'); DROP TABLE users;--"}),
    ("/forgot-password", {"email": "ada@example.com\x1b[31m"}),
    # (Python's `$` also matches before a final line break: the check ends at the text's end.)
    ("/signup", {"email": "new@example.com", "password": "a long passphrase",
                 "full_name": "Ada\n"}),
])
def test_control_characters_in_a_form_are_a_422_never_a_500(client, path, data):
    """On PostgreSQL a NUL would reach the driver and fail there: the form refuses it first."""
    response = submit(client, path, data)
    assert response.status_code == 422
    assert b"Remove the control and formatting characters." in response.data


def test_a_nul_in_a_form_password_is_refused_as_the_api_refuses_it(app, client):
    response = submit(client, "/signup", {"email": "nul@example.com", "full_name": "Nul",
                                          "password": "a long pass\x00phrase"})
    assert response.status_code == 422
    assert b"A password cannot hold a NUL character." in response.data
    with app.app_context():
        assert accounts.find_by_email("nul@example.com") is None
