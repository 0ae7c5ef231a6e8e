"""Our own small scripts in Chromium (issue 25, part 3): the show-password button beside a
password field, and the recovery codes' copy button; each page works as well without them.
(What the pages render for them: tests/unit/pages/test_own_scripts.py.)"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Route, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.browser import (
    ContextFactory,
    Site,
    create_account,
    sign_in_with_form,
    signed_in,
    signed_in_and_confirmed,
    start_authenticator,
)
from tests.system.browser.test_accessibility import check_axe

pytestmark = pytest.mark.e2e

FOCUSED_ID = "() => document.activeElement && document.activeElement.id"
FOCUSED_IS_TOGGLE = "() => document.activeElement.classList.contains('show-password')"


def test_show_password_shows_and_hides_keeping_focus_and_saying_which(page: Page, site: Site,
                                                                     axe_source: str):
    page.goto(site.url("/signup?callback=symbols"))
    field = page.get_by_label("Password", exact=True)
    toggle = page.locator("button.show-password")
    expect(toggle).to_be_visible()
    expect(toggle).to_have_accessible_name("Show password")
    expect(toggle).not_to_have_attribute("aria-pressed", re.compile(".*"))
    expect(toggle).to_have_attribute("aria-controls", "password")
    field.fill("a long secret passphrase")
    expect(field).to_have_attribute("type", "password")

    toggle.click()  # the mouse: shown, the button says "Hide" and keeps the focus
    expect(field).to_have_attribute("type", "text")
    expect(toggle).to_have_text("Hide password")
    expect(toggle).to_have_accessible_name("Hide password")
    assert page.evaluate(FOCUSED_IS_TOGGLE)
    expect(field).to_have_value("a long secret passphrase")
    check_axe(page, axe_source, "signup, password shown")

    page.keyboard.press("Space")  # the keyboard: hidden again, the focus stays
    expect(field).to_have_attribute("type", "password")
    expect(toggle).to_have_accessible_name("Show password")
    assert page.evaluate(FOCUSED_IS_TOGGLE)
    page.keyboard.press("Enter")
    expect(field).to_have_attribute("type", "text")
    expect(toggle).to_have_accessible_name("Hide password")
    # From the field, Tab reaches the button next; Shift+Tab goes back to the field.
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED_ID) == "password"
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED_IS_TOGGLE)
    check_axe(page, axe_source, "signup, password hidden")


def test_the_toggle_says_hide_in_the_pages_language(page: Page, site: Site):
    page.context.add_cookies([{"name": "svc_lang", "value": "de", "url": site.url("/")}])
    page.goto(site.url("/login"))
    toggle = page.locator("button.show-password")
    expect(toggle).to_have_text("Passwort anzeigen")
    toggle.click()
    expect(toggle).to_have_text("Passwort verbergen")
    toggle.click()
    expect(toggle).to_have_text("Passwort anzeigen")


def test_a_shown_password_is_sent_as_a_password_field(page: Page, site: Site):
    """On submit the field goes back to type=password, so the browser's password manager sees
    a password (the form's answer is held back here, to look at the page as it was sent)."""
    sent: list[str] = []

    def hold(route: Route) -> None:
        sent.append(route.request.post_data or "")
        route.fulfill(status=204)  # no content: the browser stays on the page

    page.goto(site.url("/login"))
    page.route(re.compile(r".*/login(\?.*)?$"), lambda route: hold(route)
               if route.request.method == "POST" else route.continue_())
    page.get_by_label("Email").fill("ada@example.com")
    page.get_by_label("Password", exact=True).fill("not sent in the clear")
    page.get_by_role("button", name="Show password").click()
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_label("Password", exact=True)).to_have_attribute("type", "password")
    expect(page.locator("button.show-password")).to_have_text("Show password")
    assert len(sent) == 1 and "password=not+sent+in+the+clear" in sent[0]


def test_each_password_field_of_the_account_page_has_its_own_button(page: Page, site: Site):
    signed_in(page, site, "show-many")
    current = page.get_by_label("Current password")
    new = page.get_by_label("New password")
    toggles = page.get_by_role("button", name="Show password")
    # The password change's two fields, and the new address's (it always asks the password).
    expect(toggles).to_have_count(3)
    toggles.nth(1).click()
    expect(new).to_have_attribute("type", "text")
    expect(current).to_have_attribute("type", "password")  # the other field is left alone


def test_without_script_no_button_and_the_form_still_signs_in(new_context: ContextFactory,
                                                               site: Site):
    email = new_email("show-noscript")
    create_account(site, email)
    page = new_context(java_script_enabled=False).new_page()
    page.goto(site.url("/login"))
    expect(page.get_by_role("button", name="Show password")).to_have_count(0)
    expect(page.locator("button.show-password")).to_be_hidden()
    sign_in_with_form(page, email, PASSWORD)
    expect(page).to_have_url(site.url("/account"))


# -- the recovery codes ---------------------------------------------------------------------------


def _recovery_codes_page(page: Page, site: Site, label: str) -> list[str]:
    signed_in_and_confirmed(page, site, label)
    start_authenticator(page)
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    codes = page.locator(".recovery-codes code").all_inner_texts()
    assert len(codes) == 10
    return codes


def test_the_recovery_codes_are_copied_to_the_clipboard(new_context: ContextFactory, site: Site,
                                                         axe_source: str):
    context = new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.base_url)
    page = context.new_page()
    codes = _recovery_codes_page(page, site, "copy-codes")
    status = page.locator("#copy-status")
    expect(status).to_have_attribute("role", "status")  # a polite live region
    expect(status).to_have_text("")
    copy = page.get_by_role("button", name="Copy the codes")
    copy.click()
    expect(status).to_have_text("Copied")
    expect(status).to_be_visible()
    assert page.evaluate("() => navigator.clipboard.readText()") == "\n".join(codes) + "\n"
    assert page.evaluate("() => document.activeElement.hasAttribute('data-copy-codes')")
    check_axe(page, axe_source, "recovery codes, copied")


def test_a_refused_clipboard_says_so_and_selects_the_codes(new_context: ContextFactory,
                                                           site: Site):
    context = new_context()
    page = context.new_page()
    codes = _recovery_codes_page(page, site, "copy-refused")
    # A clipboard that refuses, as a browser may (a policy, no focus, a denied permission).
    page.evaluate("""() => Object.defineProperty(navigator.clipboard, "writeText", {
        value: () => Promise.reject(new DOMException("denied", "NotAllowedError"))})""")
    page.get_by_role("button", name="Copy the codes").click()
    expect(page.locator("#copy-status")).to_contain_text("copy them yourself")
    selected = page.evaluate("() => String(window.getSelection())")
    assert all(code in selected for code in codes)


def test_without_script_the_codes_are_text_and_download_still_works(new_context: ContextFactory,
                                                                   site: Site):
    page = new_context(java_script_enabled=False, accept_downloads=True).new_page()
    codes = _recovery_codes_page(page, site, "copy-noscript")  # none of the way needs script
    expect(page.get_by_role("button", name="Copy the codes")).to_have_count(0)
    with page.expect_download() as download:
        page.get_by_role("link", name="Download them as a text file").click()
    path = download.value.path()
    assert path.read_text(encoding="utf-8") == "\n".join(codes) + "\n"

