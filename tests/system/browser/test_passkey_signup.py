"""Signing up with a passkey in Chromium, its virtual authenticator standing in for the device
(tests/browser/test_passkeys.py's server at http://localhost and its authenticator): the address,
the code from the mail, the passkey; then a new browser signs in with that passkey alone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import ContextFactory, Site, read_mail
from tests.system.browser.test_passkeys import _device_with, _newest_session, _user_id, passkey_site

pytestmark = pytest.mark.e2e
__all__ = ["passkey_site"]  # the module's server, shared with this file


def test_sign_up_with_a_passkey_and_sign_in_with_it(new_context: ContextFactory,
                                                     passkey_site: Site):
    site = passkey_site
    email = "passkey-first@example.com"
    page, authenticator = _device_with(new_context)
    page.goto(site.url("/signup"))
    page.get_by_role("link", name="Sign up with a passkey instead (no password)").click()
    page.get_by_label("Name").fill("Grace")
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_text("We sent a code to")).to_be_visible()

    mail = read_mail(site, email, "Your code to create an account")
    code = re.search(r"^\s+(\d{8})\s*$", mail.get_body(("plain",)).get_content(), re.M)
    assert code is not None
    page.get_by_label("Code from the email").fill(code.group(1))
    page.get_by_role("button", name="Continue").click()

    page.get_by_role("button", name="Create your passkey").click()  # the script ran
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    page.get_by_role("link", name="I have saved them").click()
    expect(page.get_by_role("heading", name="Add a password")).to_be_visible()
    assert site.server.query("SELECT password_hash, email_verified FROM users WHERE email = ?",
                             email) == [(None, 1)]
    held = authenticator.only_credential()

    # Another browser, holding a copy of the passkey, signs in with it alone.
    other, _ = _device_with(new_context, held)
    other.goto(site.url("/login"))
    other.get_by_role("button", name="Sign in with a passkey").click()
    expect(other).to_have_url(site.url("/account"))
    assert _newest_session(site, email)[0] == "passkey"
    assert _user_id(site, email)
