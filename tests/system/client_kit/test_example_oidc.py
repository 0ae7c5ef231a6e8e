"""One browser journey in Chromium through the example site in its OpenID Connect mode
(issue 15): authlib's Flask client on the site, the hosted login form on the service, and
RP-initiated logout back to the site."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.support.accounts import PASSWORD
from tests.support.client_kit import BrowserThread, Kit, in_context, watch_errors

pytestmark = pytest.mark.e2e


def test_the_example_site_signs_in_and_out_with_openid_connect(kit: Kit,
                                                               browser_thread: BrowserThread):
    site = kit.footprints
    email = kit.create_account()

    def scenario(context: BrowserContext) -> dict[str, Any]:
        page = context.new_page()
        errors = watch_errors(page)
        page.goto(site.url("/oidc"))
        page.get_by_role("link", name="Sign in with OpenID Connect").click()
        page.wait_for_url(re.compile("^" + re.escape(kit.service_url("/login"))))
        page.get_by_label("Email").fill(email)
        page.get_by_label("Password", exact=True).fill(PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        page.wait_for_url(site.url("/oidc"))
        signed_in_as = page.locator("#oidc-email").inner_text()
        page.get_by_role("link", name="Sign out").click()
        page.wait_for_url(site.url("/oidc"))
        expect(page.get_by_role("link", name="Sign in with OpenID Connect")).to_be_visible()
        page.goto(kit.service_url("/account"))  # signed out of the service too
        return {"as": signed_in_as, "after": page.url, "errors": errors}

    seen = browser_thread.run(in_context(site, scenario))
    assert seen["as"] == email
    assert seen["after"].startswith(kit.service_url("/login"))
    assert seen["errors"] == []
