"""An account's life (issue 24) in Chromium against the real gunicorn of conftest.py: a new
address, leaving, and the pages the mailed links open.

- Each page of it is checked as test_accessibility.py checks every hosted page (its helpers):
  axe-core finds no serious or critical violation at 360 and 1280 px, a screenshot goes to
  build/screenshots/<page>-<width>.png, nothing scrolls sideways at 360 px, the security
  headers, and nothing loaded from another origin.
- A journey: a person signs in, changes their address on the account page, opens the link mailed
  to the new address and presses its button, signs in with the new address, and finds the undo
  link in the old address's mail; then leaves from the account page (typing "delete"), is signed
  out, cannot sign in, and the restore link mailed to them brings the account back.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
import requests
from playwright.sync_api import Page, Response, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email, signup
from tests.support.browser import (
    GENEROUS_LIMITS,
    HTTP_TIMEOUT,
    ContextFactory,
    Site,
    create_account,
    link_in,
    read_mail,
    sign_in_with_form,
)
from tests.support.browser import submit_button as _submit
from tests.support.sqlite_server import Server
from tests.system.browser.test_accessibility import (
    PHONE,
    check_at_both_widths,
    check_security_headers,
)

pytestmark = pytest.mark.e2e

CHANGE_SUBJECT = "Confirm your new email address"  # to the new address
CHANGED_SUBJECT = "Your email address was changed"  # to the old one, with the undo link
LEFT_SUBJECT = "Your account will be deleted"  # with the restore link
LEAVE_WORD = re.compile(r"Type .delete. to confirm")  # the label has typographic quotes

Load = Callable[[], Response | None]
# How to reach a page: setup in the browser (and through the API); the origin the page is served
# from and its final load, whose response is the page's own document.
Reach = Callable[[Page, Site, pytest.FixtureRequest], tuple[str, Load]]


def _sign_in(page: Page, server: Site | Server, email: str) -> None:
    page.goto(server.url("/login"))
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(server.url("/account"))


def _api_tokens(site: Site, email: str) -> dict[str, str]:
    with requests.post(site.url("/api/v2/auth/login"), json={"email": email, "password": PASSWORD},
                       timeout=HTTP_TIMEOUT) as answer:
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


def _change_link(site: Site, label: str) -> tuple[str, str, str]:
    """An account whose owner asked (through the API) for a new address: the old address, the
    new one and the link mailed to the new one."""
    old, new = new_email(label), new_email(f"{label}-new")
    create_account(site, old)
    tokens = _api_tokens(site, old)
    with requests.post(site.url("/api/v2/auth/email"), timeout=HTTP_TIMEOUT,
                       headers={"Authorization": f"Bearer {tokens['access_token']}"},
                       json={"new_email": new, "password": PASSWORD}) as asked:
        assert asked.status_code == 202, asked.text
    return old, new, link_in(read_mail(site, new, CHANGE_SUBJECT), "/email-change")


# -- the pages ------------------------------------------------------------------------------------


def account_life(page: Page, _site: Site, request: pytest.FixtureRequest) -> tuple[str, Load]:
    """The account page of a sign-in that is no longer recent: the new sections ask for the
    password. A server of its own, whose sign-ins stop being recent after a second."""
    server = request.getfixturevalue("server_factory")(
        env={**GENEROUS_LIMITS, "SVC_STEP_UP_SECONDS": "1"}, workers=1)
    email = new_email("a11y-life")
    signup(server, email)
    _sign_in(page, server, email)
    time.sleep(1.5)

    def load() -> Response | None:
        response = page.goto(server.url("/account"))
        for heading in ("Change your email address", "Your data", "Delete your account"):
            expect(page.get_by_role("heading", name=heading, level=2)).to_be_visible()
        expect(page.get_by_label("Your password", exact=True)).to_have_count(2)
        expect(page.get_by_label(LEAVE_WORD)).to_be_visible()
        return response
    return server.base_url, load


def account_link_sent(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    """The account page once the link to a new address is sent: its notice."""
    email = new_email("a11y-life-sent")
    create_account(site, email, full_name="Ada Lovelace")
    _sign_in(page, site, email)
    page.get_by_label("New email address").fill(new_email("a11y-life-sent-new"))
    page.locator("#email-password").fill(PASSWORD)
    return site.base_url, _submit(page, "Send a link to the new address")


def email_change(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    _, _, link = _change_link(site, "a11y-change")
    return site.base_url, lambda: page.goto(link)


def email_change_done(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    _, _, link = _change_link(site, "a11y-change-done")
    page.goto(link)
    return site.base_url, _submit(page, "Use this address")


def email_change_undo(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    old, _, link = _change_link(site, "a11y-undo")
    page.goto(link)
    _submit(page, "Use this address")()
    undo = link_in(read_mail(site, old, CHANGED_SUBJECT), "/email-change/undo")
    return site.base_url, lambda: page.goto(undo)


def account_restore(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    email = new_email("a11y-restore")
    create_account(site, email)
    tokens = _api_tokens(site, email)
    with requests.delete(site.url("/api/v2/auth/account"), timeout=HTTP_TIMEOUT,
                         headers={"Authorization": f"Bearer {tokens['access_token']}"},
                         json={"password": PASSWORD}) as left:
        assert left.status_code == 202, left.text
    link = link_in(read_mail(site, email, LEFT_SUBJECT), "/account/restore")
    return site.base_url, lambda: page.goto(link)


def account_closed(page: Page, site: Site, _: pytest.FixtureRequest) -> tuple[str, Load]:
    email = new_email("a11y-closed")
    create_account(site, email)
    _sign_in(page, site, email)
    page.get_by_label(LEAVE_WORD).fill("delete")
    return site.base_url, _submit(page, "Delete my account")


LIFE_PAGES: dict[str, tuple[Reach, int, str]] = {
    # name (build/screenshots/<name>-<width>.png): how to reach it, its status, its heading
    "account-life": (account_life, 200, "Your account"),
    "account-link-sent": (account_link_sent, 200, "Your account"),
    "email-change": (email_change, 200, "Confirm your new address"),
    "email-change-done": (email_change_done, 200, "Confirm your new address"),
    "email-change-undo": (email_change_undo, 200, "Give your account its address back"),
    "account-restore": (account_restore, 200, "Restore your account"),
    "account-closed": (account_closed, 200, "Your account is closed"),
}


@pytest.mark.parametrize("name", list(LIFE_PAGES))
def test_life_page_is_accessible_secure_and_fits(name: str, new_context: ContextFactory,
                                                 site: Site, axe_source: str,
                                                 request: pytest.FixtureRequest):
    reach, status, heading = LIFE_PAGES[name]
    page = new_context(viewport=PHONE).new_page()
    origin, load = reach(page, site, request)

    loaded: list[str] = []
    page.on("request", lambda sent: loaded.append(sent.url))
    response = load()
    page.wait_for_load_state("load")
    assert response is not None
    assert response.status == status, (response.status, response.url)
    expect(page.get_by_role("heading", level=1)).to_have_text(heading)
    check_security_headers(response)
    # (Not the hidden CSRF fields, one per form, which nothing labels.)
    duplicated = page.evaluate("""() => {
        const ids = [...document.querySelectorAll("[id]:not(input[type=hidden])")]
            .map(el => el.id);
        return [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
    }""")
    assert not duplicated, f"ids used twice (a label then names the wrong element): {duplicated}"
    foreign = [url for url in loaded if not url.startswith(origin + "/")]
    assert not foreign, f"requests to another origin: {foreign}"
    assert [url for url in loaded if url.endswith(".css")] == [origin + "/static/svc.css"], loaded
    check_at_both_widths(page, axe_source, name)


# -- the journey ----------------------------------------------------------------------------------


def _refused_sign_in(page: Page, site: Site, email: str) -> None:
    page.goto(site.url("/login"))
    with page.expect_navigation() as navigation:
        sign_in_with_form(page, email, PASSWORD)
    answer = navigation.value
    assert answer is not None and answer.status == 401, answer and answer.status
    expect(page).not_to_have_url(site.url("/account"))
    expect(page.get_by_role("alert")).to_be_visible()


def _user_email(site: Site, user_id: str) -> str:
    return str(site.server.query("SELECT email FROM users WHERE id = ?", user_id)[0][0])


def test_a_new_address_then_leaving_and_coming_back(new_context: ContextFactory, site: Site):
    old, new = new_email("life-old"), new_email("life-new")
    create_account(site, old, full_name="Ada Lovelace")
    user_id = str(site.server.query("SELECT id FROM users WHERE email = ?", old)[0][0])

    # A new address, asked for on the account page: the password too, even just after signing
    # in (a stolen session alone must not move the account away from its owner's undo link).
    first = new_context().new_page()
    _sign_in(first, site, old)
    address = first.get_by_role("region", name="Change your email address")
    address.get_by_label("New email address").fill(new)
    address.get_by_label("Your password").fill(PASSWORD)
    address.get_by_role("button", name="Send a link to the new address").click()
    expect(first).to_have_url(site.url("/account"))
    expect(first.get_by_role("status")).to_contain_text("A link is on its way to the new address")
    assert _user_email(site, user_id) == old  # nothing changes before the link is used

    # The link in the new address's mail opens a page; its button makes the change.
    link = link_in(read_mail(site, new, CHANGE_SUBJECT), "/email-change")
    opened = first.goto(link)
    assert opened is not None and opened.status == 200
    expect(first.get_by_role("heading", level=1)).to_have_text("Confirm your new address")
    assert _user_email(site, user_id) == old  # opening is not using
    first.get_by_role("button", name="Use this address").click()
    expect(first.get_by_role("status")).to_have_text(f"Your account's address is now {new}.")
    assert _user_email(site, user_id) == new

    # The new address signs in (another device); the old one no longer does.
    second = new_context().new_page()
    _refused_sign_in(second, site, old)
    _sign_in(second, site, new)
    profile = second.get_by_role("region", name="Profile")
    expect(profile.locator(".address")).to_have_text(new)
    expect(profile.locator(".badge.ok")).to_have_text("confirmed")

    # The old address is told, with the link that gives the address back (opened, not used).
    undo = link_in(read_mail(site, old, CHANGED_SUBJECT), "/email-change/undo")
    third = new_context().new_page()
    shown = third.goto(undo)
    assert shown is not None and shown.status == 200
    expect(third.get_by_role("heading", level=1)).to_have_text(
        "Give your account its address back")
    expect(third.get_by_role("button", name="Give the address back")).to_be_visible()
    assert _user_email(site, user_id) == new

    # Leaving, from the account page: the typed word; every device is signed out at once.
    second.goto(site.url("/account"))
    leave = second.get_by_role("region", name="Delete your account")
    leave.get_by_label(LEAVE_WORD).fill("delete")
    leave.get_by_role("button", name="Delete my account").click()
    expect(second.get_by_role("heading", level=1)).to_have_text("Your account is closed")
    expect(second.get_by_role("status")).to_contain_text("You are signed out everywhere.")
    for device in (second, first):
        device.goto(site.url("/account"))
        expect(device).to_have_url(re.compile(re.escape(site.url("/login"))))
    _refused_sign_in(second, site, new)

    # The link in the mail restores the account: it signs in again.
    restore = link_in(read_mail(site, new, LEFT_SUBJECT), "/account/restore")
    second.goto(restore)
    expect(second.get_by_role("heading", level=1)).to_have_text("Restore your account")
    second.get_by_role("button", name="Restore my account").click()
    expect(second.get_by_role("status")).to_have_text(
        f"Your account {new} is back. Sign in to use it.")
    _sign_in(second, site, new)
    expect(second.get_by_role("region", name="Profile").locator(".address")).to_have_text(new)
