"""The support console (/admin, issue 23) in Chromium against a real server (see conftest.py):
who is let in, an operator disabling an account through its pages, and the console's pages
checked as test_accessibility.py checks the hosted pages.

The operator (`operator`, for the module) is made as an administrator makes one: an account
whose owner confirmed the address and turned on an authenticator app through the pages, then
`flask users grant-operator` run with the server's settings. It signs in once, through the hosted
login (password, then a code), in a browser context the module's tests share: a TOTP code is
used up with its time step, so a second sign-in a few seconds later would need the next one.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pyotp
import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, Response, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.browser import (
    DEFAULT_TIMEOUT_MS,
    HTTP_TIMEOUT,
    Site,
    create_account,
    sign_in_with_form,
    signed_in_and_confirmed,
)
from tests.support.browser import user_id_of as _user_id
from tests.system.browser.test_accessibility import (
    IPHONE_UA,
    PHONE,
    check_at_both_widths,
    check_security_headers,
)

pytestmark = pytest.mark.e2e

NOTHING_HERE = "There is nothing here"  # the hosted pages' 404 heading


@dataclass(frozen=True)
class Operator:
    email: str
    id: str
    context: BrowserContext  # signed in through the hosted login, password then code


def _sign_in(page: Page, site: Site, email: str) -> None:
    page.goto(site.url("/login"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(site.url("/account"))


def _turn_on_authenticator_app(page: Page, site: Site) -> str:
    """On the account page of a recent sign-in with a confirmed address: set up an
    authenticator app as its owner does; its key."""
    page.get_by_role("button", name="Set up an authenticator app").click()
    expect(page).to_have_url(site.url("/account/totp"))
    key = page.locator("code.key").inner_text().replace(" ", "")
    page.get_by_label("Code").fill(pyotp.TOTP(key).now())
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    return key


def _sign_in_with_code(page: Page, site: Site, email: str, key: str) -> None:
    """The hosted login: the password, then a code of the authenticator app. The code of the
    next time step (the server takes one step either side of now): the current step's was used
    up when the app was turned on, moments ago."""
    page.goto(site.url("/login"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(re.compile(r"/login/second-factor"))
    expect(page.get_by_role("heading", name="Enter your code")).to_be_visible()
    page.get_by_label("Code", exact=True).fill(pyotp.TOTP(key).at(time.time() + 30))
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page).to_have_url(site.url("/account"))


@pytest.fixture(scope="module")
def operator(browser: Browser, site: Site) -> Iterator[Operator]:
    context = browser.new_context()
    context.set_default_timeout(DEFAULT_TIMEOUT_MS)
    context.set_default_navigation_timeout(DEFAULT_TIMEOUT_MS)
    try:
        page = context.new_page()
        email = signed_in_and_confirmed(page, site, "console-operator")
        key = _turn_on_authenticator_app(page, site)
        assert site.server.cli("users", "grant-operator", email).strip() == \
            f"{email} is an operator."
        context.clear_cookies()  # a sign-in of its own, with the second step
        _sign_in_with_code(page, site, email, key)
        page.close()
        yield Operator(email, _user_id(site, email), context)
    finally:
        context.close()


def _person(site: Site, label: str, full_name: str = "Ada Lovelace") -> tuple[str, str, str]:
    """An account with a session of its own (signed in through the API from a phone): its
    email, its id and the session's refresh token."""
    email = new_email(label)
    create_account(site, email, full_name=full_name)
    with requests.post(site.url("/api/v2/auth/login"), json={"email": email, "password": PASSWORD},
                       headers={"User-Agent": IPHONE_UA}, timeout=HTTP_TIMEOUT) as answer:
        assert answer.status_code == 200, answer.text
        body = answer.json()
    return email, body["user"]["id"], body["refresh_token"]


def _main_text(page: Page) -> str:
    return page.locator("main").inner_text()


# -- who gets in ----------------------------------------------------------------------------------


def test_a_non_operator_gets_the_plain_404_and_an_operator_without_a_second_factor_a_403(
        page: Page, site: Site):
    email = new_email("console-not-yet")
    create_account(site, email)
    _, someone, _ = _person(site, "console-someone")
    plain = page.goto(site.url("/no/such/page"))
    assert plain is not None and plain.status == 404
    plain_404 = _main_text(page)

    _sign_in(page, site, email)
    for path in ("/admin", f"/admin/users/{someone}", f"/admin/users/{_user_id(site, email)}"):
        answer = page.goto(site.url(path))
        assert answer is not None and answer.status == 404, path
        expect(page.get_by_role("heading", level=1)).to_have_text(NOTHING_HERE)
        assert _main_text(page) == plain_404, path  # nothing tells the console is there
        assert "console" not in page.content().lower(), path

    site.server.cli("users", "grant-operator", email)  # an operator, with no second factor yet
    answer = page.goto(site.url("/admin"))
    assert answer is not None and answer.status == 403
    expect(page.get_by_role("heading", level=1)).to_have_text("Not allowed")
    expect(page.get_by_role("alert")).to_contain_text("needs a second factor")
    expect(page.get_by_role("alert")).to_contain_text("add an authenticator app or a passkey")
    answer = page.goto(site.url(f"/admin/users/{someone}/disable"))
    assert answer is not None and answer.status == 403
    expect(page.get_by_role("button", name=re.compile("Confirm"))).to_have_count(0)


# -- an operator at work --------------------------------------------------------------------------


def test_an_operator_finds_an_account_and_disables_it(operator: Operator, site: Site):
    email, person, refresh_token = _person(site, "console-disable")
    page = operator.context.new_page()
    page.goto(site.url("/admin"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Support console")

    prefix = email.split("@")[0]  # console-disable-<10 hex>: this account alone
    page.get_by_label("Email starts with").fill(prefix)
    page.get_by_role("button", name="Search").click()
    found = page.get_by_role("region", name="Accounts").get_by_role("listitem")
    expect(found).to_have_count(1)
    found.get_by_role("link", name=email).click()

    expect(page).to_have_url(site.url(f"/admin/users/{person}"))
    expect(page.get_by_role("heading", level=1)).to_have_text(email)
    page.get_by_role("link", name="Disable this account").click()

    expect(page).to_have_url(site.url(f"/admin/users/{person}/disable"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Disable this account")
    expect(page.get_by_text("every session ends at once")).to_be_visible()
    expect(page.get_by_label(re.compile("Code"))).to_have_count(0)  # signed in just now
    with requests.post(site.url("/api/v2/auth/refresh"), json={"refresh_token": refresh_token},
                       timeout=HTTP_TIMEOUT) as still:  # the confirmation page changed nothing
        assert still.status_code == 200, still.text
        refresh_token = still.json()["refresh_token"]
    page.get_by_role("button", name="Confirm: disable this account").click()

    expect(page).to_have_url(site.url(f"/admin/users/{person}"))
    expect(page.get_by_role("status")).to_have_text("Done: disable this account.")
    with requests.post(site.url("/api/v2/auth/refresh"), json={"refresh_token": refresh_token},
                       timeout=HTTP_TIMEOUT) as refused:
        assert refused.status_code == 401, refused.text
    expect(page.get_by_role("region", name="Account")).to_contain_text("disabled")
    expect(page.get_by_role("link", name="Enable this account")).to_be_visible()
    expect(page.get_by_role("link", name="Disable this account")).to_have_count(0)
    expect(page.get_by_role("region", name="Recent activity")).to_contain_text(
        f"account_disabled · by {operator.email} (operator:{operator.id})")


# -- the console's pages, as test_accessibility.py checks every page ------------------------------

Load = Callable[[], Response | None]


def _search_page(page: Page, site: Site) -> Load:
    email, _, _ = _person(site, "console-a11y-search")
    query = email.split("-")[0] + "-"  # console-: every account of this module
    return lambda: page.goto(site.url(f"/admin?email={query}"))


def _account_page(page: Page, site: Site) -> Load:
    _, person, _ = _person(site, "console-a11y-account", full_name="Grace Brewster Hopper")
    return lambda: page.goto(site.url(f"/admin/users/{person}"))


def _confirmation_page(page: Page, site: Site) -> Load:
    _, person, _ = _person(site, "console-a11y-edit")
    return lambda: page.goto(site.url(f"/admin/users/{person}/edit"))


CONSOLE_PAGES: dict[str, tuple[Callable[[Page, Site], Load], str]] = {
    # name (build/screenshots/<name>-<width>.png): how to reach it, and its heading
    "console-search": (_search_page, "Support console"),
    "console-account": (_account_page, "console-a11y-account-"),
    "console-confirm": (_confirmation_page, "Change the name or plan"),
}


@pytest.mark.parametrize("name", list(CONSOLE_PAGES))
def test_console_page_is_accessible_secure_and_fits(name: str, operator: Operator, site: Site,
                                                    axe_source: str):
    """axe-core at 360 and 1280 px, a screenshot of each, no sideways scrolling at 360 px
    (check_at_both_widths); the hosted pages' headers, and nothing from another origin."""
    reach, heading = CONSOLE_PAGES[name]
    page = operator.context.new_page()
    page.set_viewport_size(PHONE)
    load = reach(page, site)
    loaded: list[str] = []
    page.on("request", lambda sent: loaded.append(sent.url))
    response = load()
    page.wait_for_load_state("load")
    assert response is not None and response.status == 200, response
    expect(page.get_by_role("heading", level=1)).to_contain_text(heading)
    check_security_headers(response)
    foreign = [url for url in loaded if not url.startswith(site.base_url + "/")]
    assert not foreign, f"requests to another origin: {foreign}"
    assert [url for url in loaded if url.endswith(".css")] == [site.url("/static/svc.css")]
    check_at_both_widths(page, axe_source, name)

