"""Signing in with a mailed code in Chromium: from a client site's login, "Email me a code", the
code typed, and back at the site; the mail's link in another browser shows the code and signs
nobody in, and in the asking browser signs in with its button."""

from __future__ import annotations

import contextlib
import email
import email.policy
import time
from email.message import EmailMessage

import pytest
from playwright.sync_api import Page, expect

from tests.support.api import new_email
from tests.support.browser import (
    ContextFactory,
    Site,
    create_account,
    link_in,
    wait_for_callback,
)

pytestmark = pytest.mark.e2e

SUBJECT = "Your sign-in code: "
MAIL_DEADLINE = 60.0  # seconds: the outbox sends in the background, on a loaded machine


def _code_mails(site: Site, to: str) -> list[EmailMessage]:
    found: list[tuple[float, EmailMessage]] = []
    for path in site.mail_dir.glob("*.eml"):
        with contextlib.suppress(FileNotFoundError):
            message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
            assert isinstance(message, EmailMessage)
            if message["To"] == to and str(message["Subject"]).startswith(SUBJECT):
                found.append((path.stat().st_mtime, message))
    return [message for _, message in sorted(found, key=lambda item: item[0])]


def _nth_code_mail(site: Site, to: str, count: int) -> EmailMessage:
    """The `count`-th code mail to `to`, once the outbox has sent it."""
    deadline = time.monotonic() + MAIL_DEADLINE
    while True:
        mails = _code_mails(site, to)
        if len(mails) >= count:
            return mails[count - 1]
        assert time.monotonic() < deadline, f"{count} code mails to {to} never came"
        time.sleep(0.1)


def _ask(page: Page, address: str) -> None:
    page.get_by_label("Email").fill(address)
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()


def test_a_code_from_a_client_site_s_login_and_a_link_in_the_wrong_browser(
        page: Page, site: Site, new_context: ContextFactory) -> None:
    address = new_email("emailcode")
    create_account(site, address)
    page.goto(site.url(f"/login?redirect_uri={site.symbols_cb}&state=s-code"))
    page.get_by_role("link", name="Email me a code").click()
    _ask(page, address)
    mail = _nth_code_mail(site, address, 1)
    code = str(mail["Subject"])[len(SUBJECT):]
    page.get_by_label("Code from the email").fill(code)
    page.get_by_role("button", name="Sign in").click()
    back = wait_for_callback(page, site.symbols_cb)
    assert back["provider"] == "email_code" and back["state"] == "s-code" and back["code"]

    # A second code, asked from this browser (signed in here by the first: single sign-on); its
    # link opened on another device shows the code.
    page.goto(site.url("/login/email-code"))
    _ask(page, address)
    link = link_in(_nth_code_mail(site, address, 2), "/login/email-code/link")
    stranger = new_context().new_page()
    stranger.goto(link)
    expect(stranger.get_by_role("heading", name="Your sign-in code")).to_be_visible()
    second = str(_nth_code_mail(site, address, 2)["Subject"])[len(SUBJECT):]
    expect(stranger.get_by_role("status")).to_contain_text(second)
    expect(stranger.get_by_role("button", name="Sign in")).to_have_count(0)
    stranger.goto(site.url("/account"))
    expect(stranger).to_have_url(site.url("/login"))

    # In the asking browser the link is a button that signs in.
    page.goto(link)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(site.url("/account"))
