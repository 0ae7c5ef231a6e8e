"""A hosted sign-up with the captcha widget, in Chromium (issue 17, item 6): the page loads the
provider's script (the local stand-in's, tests/support/captcha_standin.py) under a CSP widened to
that
origin alone; the form is refused until the widget is solved, then the account is created."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.captcha_standin import StandIn
from tests.support.sqlite_server import ServerFactory

pytestmark = pytest.mark.e2e


@pytest.fixture
def standin() -> Iterator[StandIn]:
    server = StandIn().start()
    yield server
    server.stop()


def test_a_hosted_sign_up_with_the_widget(page: Page, server_factory: ServerFactory,
                                          standin: StandIn):
    server = server_factory(env={
        "SVC_CAPTCHA_MODE": "on", "SVC_CAPTCHA_PROVIDER": "turnstile",
        "SVC_CAPTCHA_SECRET": "stand-in-secret", "SVC_CAPTCHA_SITE_KEY": "stand-in-site-key",
        "SVC_CAPTCHA_VERIFY_URL": f"{standin.url}/siteverify",
        "SVC_CAPTCHA_SCRIPT_URL": f"{standin.url}/api.js"}, workers=1)
    blocked: list[str] = []
    page.on("console", lambda message: blocked.append(message.text)
            if "Content Security Policy" in message.text else None)
    email = new_email("captcha")

    answer = page.goto(server.url("/signup"))
    assert answer is not None
    # The widget's origin, and our own scripts (the show-password button's).
    assert f"script-src 'self' {standin.url};" in answer.headers["content-security-policy"]
    human = page.get_by_role("button", name="I am human")
    expect(human).to_be_visible()  # the stand-in's script ran: the CSP let it in

    page.get_by_label("Name").fill("Ada Lovelace")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("alert")).to_contain_text("complete the check below")

    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="I am human").click()
    expect(page.get_by_role("button", name="Solved")).to_be_disabled()
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(server.url("/account"))
    assert standin.calls and standin.calls[-1]["response"].startswith("pass-")
    assert blocked == []
