"""The hosted pages, as a person uses them: Chromium against a real server (see conftest.py)."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from playwright.sync_api import BrowserContext, Page, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.browser import (
    GENEROUS_LIMITS,
    HTTP_TIMEOUT,
    ContextFactory,
    Site,
    create_account,
    exchange,
    link_in,
    read_mail,
    sign_in_with_form,
    wait_for_callback,
)
from tests.support.encoding import pkce_pair
from tests.support.sqlite_server import ServerFactory

pytestmark = pytest.mark.e2e

# Another browser on another device, for the session list.
PHONE_UA = ("Mozilla/5.0 (Android 14; Mobile; rv:128.0) Gecko/128.0 Firefox/128.0")


def _signed_in_account(page: Page, site: Site, email: str, password: str = PASSWORD) -> None:
    """Sign in with no client site: the person lands on their account page."""
    page.goto(site.url("/login"))
    sign_in_with_form(page, email, password)
    expect(page).to_have_url(site.url("/account"))
    expect(page.get_by_role("heading", name="Your account", exact=True)).to_be_visible()


# -- sign-up and sign-in --------------------------------------------------------------------------


def test_sign_up_from_a_client_site_returns_with_a_code_that_exchanges(page: Page, site: Site):
    verifier, challenge = pkce_pair()
    email = new_email("signup")
    query = urlencode({"redirect_uri": site.symbols_cb, "state": "s1", "code_challenge": challenge,
                       "code_challenge_method": "S256"})
    page.goto(site.url(f"/signup?{query}"))
    expect(page.get_by_role("heading", name="Create an account")).to_be_visible()

    page.get_by_label("Name").fill("Ada Lovelace")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()

    back = wait_for_callback(page, site.symbols_cb)
    assert back["provider"] == "password"
    assert back["state"] == "s1"
    assert set(back) == {"code", "provider", "state"}
    # Referrer-Policy: no-referrer held through the redirect: the site learns nothing else.
    assert "Referer" not in site.clients.visit_with(back["code"]).headers

    answer = exchange(site, back["code"], "password", verifier, site.symbols_cb)
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email
    assert answer.json()["user"]["full_name"] == "Ada Lovelace"
    # The code is single use.
    assert exchange(site, back["code"], "password", verifier).status_code == 401


def test_sign_in_with_a_password_returns_to_the_site(page: Page, site: Site):
    email = new_email("signin")
    create_account(site, email)
    page.goto(site.url("/login?callback=symbols"))
    sign_in_with_form(page, email, PASSWORD)

    back = wait_for_callback(page, site.symbols_cb)
    assert back["provider"] == "password"
    answer = exchange(site, back["code"], "password")
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email

    # The service's own browser session, and the known-device cookie that outlives it (strangers'
    # failures on the account do not hold this browser back): out of scripts' reach, not sent
    # cross-site, naming no one.
    cookies = {cookie["name"]: cookie for cookie in page.context.cookies(site.base_url)}
    assert set(cookies) == {"svc_session", "svc_device"}, cookies
    for cookie in cookies.values():
        assert cookie["httpOnly"] is True
        assert cookie["sameSite"] == "Lax"
        assert cookie["path"] == "/"
    assert email.split("@")[0] not in cookies["svc_device"]["value"]


def test_a_wrong_password_shows_the_error_and_keeps_the_email(page: Page, site: Site):
    email = new_email("wrong")
    create_account(site, email)
    page.goto(site.url("/login?callback=symbols"))
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        sign_in_with_form(page, email, "not the password at all")
    assert posted.value.status == 401

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("Incorrect email or password.")
    expect(page.get_by_label("Email")).to_have_value(email)
    expect(page.get_by_label("Password", exact=True)).to_have_value("")
    assert "not the password" not in page.content()
    # Still on its way to the client site: the form posts to the same target.
    assert "callback=symbols" in page.url or "redirect_uri=" in page.url

    # And the right password from there still goes back to the site.
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    back = wait_for_callback(page, site.symbols_cb)
    assert exchange(site, back["code"], "password").status_code == 200


def test_sign_in_with_google_through_the_local_openid_server(page: Page, site: Site):
    email = new_email("google")
    site.oidc.next_login(sub=f"google-{email}", email=email, email_verified=True,
                         name="Grace Hopper")
    page.goto(site.url("/login?callback=symbols"))
    # Buttons for the configured providers only: Google is set up here, GitHub is not.
    expect(page.get_by_role("link", name="Sign in with GitHub")).to_have_count(0)
    page.get_by_role("link", name="Sign in with Google").click()

    back = wait_for_callback(page, site.symbols_cb)
    assert back["provider"] == "google"
    answer = exchange(site, back["code"], "google")
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email

    # The browser is now signed in on the service, through Google.
    page.goto(site.url("/account"))
    expect(page.get_by_text(email)).to_be_visible()
    expect(page.get_by_role("region", name="Sign-in providers")).to_contain_text("linked")


def test_sign_up_with_google_keeps_the_sites_state_and_pkce(page: Page, site: Site):
    email = new_email("google-signup")
    site.oidc.next_login(sub=f"google-{email}", email=email, email_verified=True, name="Mary")
    verifier, challenge = pkce_pair()
    query = urlencode({"redirect_uri": site.footprints_cb, "state": "g-1",
                       "code_challenge": challenge, "code_challenge_method": "S256"})
    page.goto(site.url(f"/signup?{query}"))
    page.get_by_role("link", name="Sign up with Google").click()

    back = wait_for_callback(page, site.footprints_cb)
    assert (back["provider"], back["state"]) == ("google", "g-1")
    # Bound to the site's PKCE challenge: no verifier, no tokens (and the code is burnt).
    assert exchange(site, back["code"], "google").status_code == 401

    page.goto(site.url(f"/login?{query}"))  # signed in through Google: straight back
    again = wait_for_callback(page, site.footprints_cb)
    assert again["provider"] == "google"
    answer = exchange(site, again["code"], "google", verifier, site.footprints_cb)
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email


def test_google_for_an_email_with_a_password_account_asks_for_that_password(page: Page,
                                                                            site: Site):
    """Its password may be a stranger's (issue 12): no silent link. The person proves it, and
    the sign-in goes on to the site with its state."""
    email = new_email("exists")
    create_account(site, email)  # its email is not confirmed: no automatic linking
    site.oidc.next_login(sub=f"google-{email}", email=email, email_verified=True)
    page.goto(site.url("/login?callback=symbols&state=e1"))
    page.get_by_role("link", name="Sign in with Google").click()

    expect(page).to_have_url(site.url("/login/link"))
    expect(page.get_by_role("heading", level=1)).to_have_text("This email already has an account")
    expect(page.get_by_text(email)).to_be_visible()
    page.get_by_label("Password of this account").fill("not the password")
    page.get_by_role("button", name="Link Google").click()
    expect(page.get_by_text("The password is not right.")).to_be_visible()
    page.get_by_label("Password of this account").fill(PASSWORD)
    page.get_by_role("button", name="Link Google").click()
    back = wait_for_callback(page, site.symbols_cb)
    assert (back["provider"], back["state"]) == ("google", "e1")
    assert exchange(site, back["code"], "google").json()["user"]["email"] == email


def test_google_for_someone_elses_password_account_takes_it_over(page: Page, site: Site):
    """A stranger signed up with this address and a password: the owner, signing in with Google,
    continues with Google alone, and the stranger's password stops working."""
    email = new_email("pre-registered")
    create_account(site, email, password="the stranger's passphrase")
    site.oidc.next_login(sub=f"google-{email}", email=email, email_verified=True)
    page.goto(site.url("/login"))
    page.get_by_role("link", name="Sign in with Google").click()
    expect(page).to_have_url(site.url("/login/link"))
    page.get_by_role("button", name="Continue with Google alone").click()
    expect(page).to_have_url(site.url("/account"))
    with requests.post(site.url("/api/v2/auth/login"),
                       json={"email": email, "password": "the stranger's passphrase"},
                       timeout=HTTP_TIMEOUT) as stranger:
        assert stranger.status_code == 401


def test_declining_at_google_comes_back_to_the_form_with_a_notice(page: Page, site: Site):
    site.oidc.deny_next()
    page.goto(site.url("/login?callback=symbols&state=d1"))
    page.get_by_role("link", name="Sign in with Google").click()
    expect(page.get_by_role("alert")).to_contain_text("Sign-in was cancelled or refused.")
    expect(page).to_have_url(re.compile(r"/login\?.*error=access_denied"))
    expect(page.get_by_label("Email")).to_be_visible()
    assert not [v for v in site.clients.visits if "state=d1" in v.query.split("&")]


def test_signup_errors_sit_next_to_their_fields(page: Page, site: Site):
    taken = new_email("taken")
    create_account(site, taken)
    page.goto(site.url("/signup?callback=symbols"))
    page.get_by_label("Name").fill("Ada")
    page.get_by_label("Email").fill(taken)
    page.get_by_label("Password", exact=True).fill("an uncommon passphrase")
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Create account").click()
    assert posted.value.status == 409
    email_field = page.get_by_label("Email")
    expect(email_field).to_have_attribute("aria-invalid", "true")
    expect(email_field).to_have_accessible_description(re.compile("Sign in instead"))
    expect(page.get_by_role("alert")).to_be_visible()
    expect(email_field).to_have_value(taken)
    expect(page.get_by_label("Name")).to_have_value("Ada")
    expect(page.get_by_label("Password", exact=True)).to_have_value("")

    page.get_by_label("Email").fill(new_email("fresh"))
    page.get_by_label("Password", exact=True).fill("password1")
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Create account").click()
    assert posted.value.status == 422
    password_field = page.get_by_label("Password", exact=True)
    expect(password_field).to_have_attribute("aria-invalid", "true")
    expect(password_field).to_have_accessible_description(re.compile("common", re.I))
    expect(page.get_by_label("Email")).not_to_have_attribute("aria-invalid", "true")


def test_a_redirect_uri_that_is_not_registered_is_refused_even_when_signed_in(
        page: Page, site: Site):
    email = new_email("evil")
    create_account(site, email)
    _signed_in_account(page, site, email)
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))
    for target in ("https://evil.example/cb", site.symbols_cb + "/", site.symbols_cb + "?x=1",
                   "//evil.example/cb", "/account"):
        for path in ("/login", "/signup", "/forgot-password"):
            query = urlencode({"redirect_uri": target, "state": "s"})
            response = page.goto(site.url(f"{path}?{query}"))
            assert response is not None and response.status == 400, (path, target)
            assert response.request.redirected_from is None
            expect(page.get_by_role("heading", name="We could not sign you in")).to_be_visible()
    response = page.goto(site.url("/login?callback=unknown-site"))
    assert response is not None and response.status == 400
    assert all(url.startswith(site.base_url + "/") for url in sent), sent
    assert not [v for v in site.clients.visits if "state=s" in v.query.split("&")]


def test_client_state_is_carried_but_never_becomes_markup(page: Page, site: Site):
    state = '"><img/src=x/onerror=alert(1)><script>alert(2)</script>'
    email = new_email("xss")
    create_account(site, email)
    page.goto(site.url(f"/login?{urlencode({'callback': 'symbols', 'state': state})}"))
    expect(page.locator("img")).to_have_count(0)
    # No script but our own show-password button's, from its file.
    expect(page.locator("main script:not([src='/static/show-password.js'])")).to_have_count(0)
    sign_in_with_form(page, email, PASSWORD)
    back = wait_for_callback(page, site.symbols_cb)
    assert back["state"] == state


# -- recovery -------------------------------------------------------------------------------------


def test_forgot_and_reset_through_the_mail_outbox(page: Page, site: Site):
    email = new_email("reset")
    create_account(site, email)
    new_password = "a brand new passphrase for reset"

    page.goto(site.url("/forgot-password"))
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()

    link = link_in(read_mail(site, email, "Reset your password"), "/reset-password")
    assert link.startswith(site.base_url + "/reset-password?token=")
    page.goto(link)
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    assert "token" not in page.url, page.url  # moved out of the address bar
    assert page.url == site.url("/reset-password")

    page.get_by_label("New password").fill(new_password)
    page.get_by_role("button", name="Set the password").click()
    expect(page.get_by_role("heading", name="Password updated")).to_be_visible()

    # The old password no longer works; the new one does.
    page.goto(site.url("/login"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page.get_by_role("alert")).to_contain_text("Incorrect email or password.")
    page.get_by_label("Password", exact=True).fill(new_password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page).to_have_url(site.url("/account"))

    # The link worked once.
    page.goto(link)
    expect(page.get_by_role("alert")).to_be_visible()
    expect(page.get_by_label("New password")).to_have_count(0)


def test_password_recovery_sends_the_person_back_to_the_site(page: Page, site: Site):
    """Of the sign-in that asked for the reset, only the site's name travels through mail: after
    the reset the person goes back to the site, which starts a sign-in with its own state and
    challenge (issue 12, item 9)."""
    email = new_email("recover-site")
    create_account(site, email)
    new_password = "recovered passphrase for the site"
    _, first_challenge = pkce_pair()
    state = "recover-state-kept-by-the-site"  # long: no random token contains it by chance
    query = urlencode({"redirect_uri": site.symbols_cb, "state": state,
                       "code_challenge": first_challenge, "code_challenge_method": "S256"})
    page.goto(site.url(f"/login?{query}"))
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()

    link = link_in(read_mail(site, email, "Reset your password"), "/reset-password")
    assert "site=symbols" in link and state not in link and first_challenge not in link
    assert sorted(parse_qs(urlsplit(link).query)) == ["site", "token"]
    page.goto(link)
    assert "token" not in page.url
    page.get_by_label("New password").fill(new_password)
    page.get_by_role("button", name="Set the password").click()
    page.get_by_role("link", name="Back to symbols").click()
    page.get_by_role("heading", name="Back at the client site").wait_for()
    assert page.url == site.clients.origin + "/"

    # The site starts a sign-in of its own.
    verifier, challenge = pkce_pair()
    query = urlencode({"redirect_uri": site.symbols_cb, "state": "fresh-2",
                       "code_challenge": challenge, "code_challenge_method": "S256"})
    page.goto(site.url(f"/login?{query}"))
    sign_in_with_form(page, email, new_password)
    back = wait_for_callback(page, site.symbols_cb)
    assert back["state"] == "fresh-2"
    answer = exchange(site, back["code"], "password", verifier, site.symbols_cb)
    assert answer.status_code == 200, answer.text


def test_confirm_the_email_from_the_mail(page: Page, site: Site):
    email = new_email("confirm")
    page.goto(site.url("/signup"))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(site.url("/account"))  # no client site: the account page
    profile = page.get_by_role("region", name="Profile")
    expect(profile).to_contain_text("not confirmed")

    page.goto(link_in(read_mail(site, email, "Confirm your email address"), "/confirm-email"))
    page.get_by_role("button", name="Confirm my address").click()
    expect(page.get_by_role("heading", name="Email confirmed")).to_be_visible()
    page.goto(site.url("/account"))
    expect(profile.locator(".badge")).to_have_text("confirmed")
    expect(page.get_by_role("button", name="Send a new confirmation link")).to_have_count(0)


# -- single sign-on and sign-out ------------------------------------------------------------------


def test_single_sign_on_into_a_second_site_without_a_form(page: Page, site: Site):
    email = new_email("sso")
    create_account(site, email)
    page.goto(site.url("/login?callback=symbols"))
    sign_in_with_form(page, email, PASSWORD)
    first = wait_for_callback(page, site.symbols_cb)

    verifier, challenge = pkce_pair()
    query = urlencode({"redirect_uri": site.footprints_cb, "state": "f1",
                       "code_challenge": challenge, "code_challenge_method": "S256"})
    response = page.goto(site.url(f"/login?{query}"))
    assert response is not None
    back = wait_for_callback(page, site.footprints_cb)
    # Straight through: the only step before the site was the /login redirect, no form shown.
    hops = []
    request = response.request
    while request.redirected_from is not None:
        request = request.redirected_from
        hops.append(request.url)
    assert hops == [site.url(f"/login?{query}")]
    assert back["provider"] == "password"
    assert back["state"] == "f1"
    assert back["code"] != first["code"]
    answer = exchange(site, back["code"], "password", verifier, site.footprints_cb)
    assert answer.status_code == 200, answer.text
    assert answer.json()["user"]["email"] == email

    # prompt=login forces the form even though the browser is signed in.
    page.goto(site.url("/login?callback=footprints&prompt=login"))
    expect(page).to_have_url(re.compile(r"/login\?"))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_label("Email")).to_be_visible()


def test_sign_out_ends_the_browser_session(page: Page, site: Site):
    email = new_email("signout")
    create_account(site, email)
    _signed_in_account(page, site, email)

    page.locator("header").get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(site.url("/login"))
    expect(page.locator("header").get_by_role("button", name="Sign out")).to_have_count(0)

    page.goto(site.url("/login?callback=symbols"))
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_label("Email")).to_be_visible()
    page.goto(site.url("/account"))
    expect(page).to_have_url(site.url("/login"))


def test_back_after_sign_out_does_not_show_the_account(page: Page, site: Site):
    email = new_email("back")
    create_account(site, email)
    _signed_in_account(page, site, email)
    page.locator("header").get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(site.url("/login"))
    page.go_back()  # to /account: not from a cache (no-store), so the server sends it to /login
    expect(page).to_have_url(site.url("/login"))
    expect(page.get_by_role("heading", name="Your account", exact=True)).to_have_count(0)
    expect(page.get_by_text(email)).to_have_count(0)


# -- rate limits ----------------------------------------------------------------------------------


def test_a_rate_limited_form_says_when_to_try_again(new_context: ContextFactory,
                                                    server_factory: ServerFactory):
    limited = server_factory(env={**GENEROUS_LIMITS, "SVC_LIMIT_LOGIN": "3 per minute"},
                             workers=1)
    page = new_context().new_page()
    page.goto(limited.url("/login"))
    statuses = []
    for _ in range(6):
        if page.get_by_label("Email").count() == 0:
            break
        with page.expect_response(lambda r: r.request.method == "POST") as posted:
            sign_in_with_form(page, "nobody@example.com", "wrong password, again")
        statuses.append(posted.value.status)
    assert statuses == [401, 401, 401, 429], statuses
    assert posted.value.headers.get("retry-after", "").isdigit()
    expect(page.get_by_role("heading", name="Slow down a little")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(re.compile(r"Try again in \d+ seconds"))


# -- the account page -----------------------------------------------------------------------------


def test_account_page_lists_sessions_and_signs_out_another_device(new_context: ContextFactory,
                                                                  site: Site):
    email = new_email("devices")
    create_account(site, email)
    laptop: BrowserContext = new_context()
    phone: BrowserContext = new_context(user_agent=PHONE_UA)
    laptop_page, phone_page = laptop.new_page(), phone.new_page()
    _signed_in_account(laptop_page, site, email)
    _signed_in_account(phone_page, site, email)

    laptop_page.reload()
    devices = laptop_page.get_by_role("region", name="Signed-in devices").get_by_role("listitem")
    expect(devices).to_have_count(2)
    expect(devices.filter(has_text="this browser")).to_have_count(1)
    expect(devices.filter(has_text="this browser")).to_contain_text("Chrome on Linux")
    other = devices.filter(has_not_text="this browser")
    expect(other).to_contain_text("Firefox on Android")
    expect(other).to_contain_text("127.0.0.1")

    other.get_by_role("button", name="Sign out").click()
    expect(laptop_page.get_by_role("status")).to_contain_text("That device is signed out.")
    expect(devices).to_have_count(1)
    expect(devices).to_contain_text("this browser")

    phone_page.goto(site.url("/account"))
    expect(phone_page).to_have_url(site.url("/login"))
    # The laptop is still signed in.
    laptop_page.goto(site.url("/account"))
    expect(laptop_page).to_have_url(site.url("/account"))

    # "Sign out every other device", and "Sign out" on this browser's own row.
    sign_in_with_form(phone_page, email, PASSWORD)
    expect(phone_page).to_have_url(site.url("/account"))
    laptop_page.reload()
    expect(devices).to_have_count(2)
    laptop_page.get_by_role("button", name="Sign out every other device").click()
    expect(laptop_page.get_by_role("status")).to_contain_text("Every other device is signed out.")
    expect(devices).to_have_count(1)
    phone_page.reload()
    expect(phone_page).to_have_url(site.url("/login"))
    devices.get_by_role("button", name="Sign out").click()
    expect(laptop_page).to_have_url(site.url("/login"))
    laptop_page.goto(site.url("/account"))
    expect(laptop_page).to_have_url(site.url("/login"))


def test_signing_in_again_leaves_no_ghost_session(page: Page, site: Site):
    """`prompt=login` makes a signed-in browser sign in again: the session its cookie held
    must end, or the account lists a device that no browser holds any more."""
    email = new_email("again")
    create_account(site, email)
    _signed_in_account(page, site, email)
    page.goto(site.url("/login?callback=symbols&prompt=login"))
    sign_in_with_form(page, email, PASSWORD)
    wait_for_callback(page, site.symbols_cb)
    page.goto(site.url("/account"))
    devices = page.get_by_role("region", name="Signed-in devices")
    expect(devices).to_be_visible()
    assert devices.get_by_role("listitem").count() == 1, devices.inner_text()


def test_a_session_of_another_account_cannot_be_ended(new_context: ContextFactory, site: Site):
    alice, mallory = new_email("alice"), new_email("mallory")
    create_account(site, alice)
    create_account(site, mallory)
    alice_page, mallory_page = new_context().new_page(), new_context().new_page()
    _signed_in_account(alice_page, site, alice)
    _signed_in_account(mallory_page, site, mallory)
    alice_end = alice_page.locator("form[action$='/end']").get_attribute("action")
    assert alice_end and alice_end.startswith("/account/sessions/")
    token = mallory_page.locator("input[name=csrf_token]").first.input_value()

    answer = mallory_page.request.post(site.url(alice_end), form={"csrf_token": token},
                                       max_redirects=0)
    assert answer.status == 404, answer.status
    answer.dispose()
    alice_page.reload()
    expect(alice_page).to_have_url(site.url("/account"))


def test_link_and_unlink_google_on_the_account_page(page: Page, site: Site):
    email = new_email("link")
    create_account(site, email)
    site.oidc.next_login(sub=f"google-link-{email}", email=f"other-{email}", email_verified=True)
    _signed_in_account(page, site, email)
    providers = page.get_by_role("region", name="Sign-in providers")
    # Not before the address is confirmed (issue 12): it may be someone else's.
    expect(providers).to_contain_text("Confirm your email address to link it.")
    expect(providers.get_by_role("button", name="Link")).to_have_count(0)
    page.goto(link_in(read_mail(site, email, "Confirm your email address"), "/confirm-email"))
    page.get_by_role("button", name="Confirm my address").click()
    page.goto(site.url("/account"))
    providers.get_by_role("button", name="Link").click()

    expect(page).to_have_url(re.compile(r"/account\?linked=google$"))
    expect(page.get_by_role("status")).to_contain_text("Google is now linked.")
    expect(providers.get_by_role("listitem")).to_contain_text("linked")
    providers.get_by_role("button", name="Unlink").click()
    expect(page.get_by_role("status")).to_contain_text("Google is no longer linked.")
    expect(providers.get_by_role("button", name="Link")).to_be_visible()


def test_change_password_signs_out_the_other_device(new_context: ContextFactory, site: Site):
    email = new_email("change")
    create_account(site, email)
    new_password = "another long passphrase here"
    laptop, phone = new_context(), new_context(user_agent=PHONE_UA)
    laptop_page, phone_page = laptop.new_page(), phone.new_page()
    _signed_in_account(laptop_page, site, email)
    _signed_in_account(phone_page, site, email)

    laptop_page.get_by_label("Current password").fill(PASSWORD)
    laptop_page.get_by_label("New password").fill(new_password)
    laptop_page.get_by_role("button", name="Change password").click()
    expect(laptop_page.get_by_role("status")).to_contain_text("Password changed.")
    expect(laptop_page).to_have_url(site.url("/account"))
    devices = laptop_page.get_by_role("region", name="Signed-in devices").get_by_role("listitem")
    expect(devices).to_have_count(1)

    phone_page.goto(site.url("/account"))
    expect(phone_page).to_have_url(site.url("/login"))
    sign_in_with_form(phone_page, email, PASSWORD)
    expect(phone_page.get_by_role("alert")).to_contain_text("Incorrect email or password.")
    phone_page.get_by_label("Password", exact=True).fill(new_password)
    phone_page.get_by_role("button", name="Sign in", exact=True).click()
    expect(phone_page).to_have_url(site.url("/account"))


def test_change_password_with_a_wrong_current_password_is_refused(page: Page, site: Site):
    email = new_email("change-wrong")
    create_account(site, email)
    _signed_in_account(page, site, email)
    page.get_by_label("Current password").fill("not my password")
    page.get_by_label("New password").fill("another long passphrase here")
    with page.expect_response(lambda r: r.request.method == "POST") as posted:
        page.get_by_role("button", name="Change password").click()
    assert posted.value.status == 401
    expect(page.locator("#current_password-error")).to_contain_text(
        "The current password is not right.")
    expect(page.get_by_label("Current password")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Current password")).to_have_value("")
    expect(page.get_by_label("New password")).to_have_value("")


# -- CSRF -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/login", "/signup", "/forgot-password", "/logout",
                                  "/account/sessions/end-others", "/account/password"])
def test_a_form_post_without_the_csrf_token_is_refused(page: Page, site: Site, path: str):
    email = new_email("csrf")
    create_account(site, email)
    _signed_in_account(page, site, email)  # the session cookie goes with the forged post
    fields = {"email": email, "password": PASSWORD, "full_name": "Mallory",
              "current_password": PASSWORD, "new_password": "forged passphrase value"}
    answer = page.request.post(site.url(path), form=fields, max_redirects=0)
    assert answer.status == 400, (answer.status, answer.text()[:500])
    assert "did not come from this site" in answer.text()
    answer.dispose()
    # Nothing happened: still signed in, with the same password.
    page.goto(site.url("/account"))
    expect(page).to_have_url(site.url("/account"))
    with requests.post(site.url("/api/v2/auth/login"), json={"email": email, "password": PASSWORD},
                       timeout=HTTP_TIMEOUT) as login:
        assert login.status_code == 200
