"""The JS kit's login() and the example site when the service asks for a captcha (issue 17,
item 6): after failed sign-ins the kit's error carries `captcha` ({provider, siteKey}), the site
shows that widget (the local stand-in's script), and the next login() passes its token."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from playwright.sync_api import BrowserContext, expect

from tests.support.accounts import PASSWORD
from tests.support.captcha_standin import StandIn, fresh_token
from tests.support.client_kit import (
    HTTP_TIMEOUT,
    BrowserThread,
    RunningSite,
    bind_site,
    in_context,
    open_site,
    site_module,
    watch_errors,
)
from tests.support.sqlite_server import Server, start_server

pytestmark = pytest.mark.e2e


@dataclass
class CaptchaKit:
    service: Server
    site: RunningSite
    standin: StandIn


@pytest.fixture
def captcha_kit() -> Iterator[CaptchaKit]:
    standin = StandIn().start()
    site = bind_site("symbols")
    workdir = Path(tempfile.mkdtemp(prefix="svc-captcha-kit-"))
    registry = {"symbols": {"redirect_uris": [site.callback], "origins": [site.base_url]}}
    service = start_server(workdir / "server", {
        "SVC_CLIENT_SITES": json.dumps(registry), "SVC_CAPTCHA_MODE": "on",
        "SVC_CAPTCHA_PROVIDER": "turnstile", "SVC_CAPTCHA_SECRET": "stand-in-secret",
        "SVC_CAPTCHA_SITE_KEY": "stand-in-site-key",
        "SVC_CAPTCHA_VERIFY_URL": f"{standin.url}/siteverify"}, workers=1)
    try:
        site.slot.app = site_module().create_app("symbols", service.base_url, site.pricing_url,
                                                  captcha_script=f"{standin.url}/api.js")
        site.thread.start()
        yield CaptchaKit(service, site, standin)
    finally:
        site.stop()
        service.stop()
        standin.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def test_login_surfaces_captcha_required_and_passes_the_widgets_token(
        captcha_kit: CaptchaKit, browser_thread: BrowserThread):
    email = "captcha-kit@example.com"
    created = requests.post(captcha_kit.service.url("/api/v2/auth/signup"), timeout=HTTP_TIMEOUT,
                            json={"email": email, "password": PASSWORD,
                                  "captcha_token": fresh_token()})
    assert created.status_code == 201, created.text
    site = captcha_kit.site

    def scenario(context: BrowserContext) -> list[str]:
        page = open_site(context, site)
        errors = watch_errors(page)
        page.get_by_label("Email").fill(email)
        for _ in range(3):
            page.get_by_label("Password").fill("not the password")
            page.get_by_role("button", name="Sign in", exact=True).click()
            expect(page.get_by_role("alert")).to_contain_text("Incorrect")
            page.get_by_role("alert").evaluate("node => { node.textContent = ''; }")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.get_by_role("alert")).to_contain_text("captcha")  # captcha_required
        expect(page.locator('.cf-turnstile[data-sitekey="stand-in-site-key"]')).to_be_attached()
        page.get_by_role("button", name="I am human").click()
        page.get_by_role("button", name="Sign in", exact=True).click()
        expect(page.locator("#who")).to_have_text(f"Signed in as {email}")
        return [error for error in errors if "401" not in error and "422" not in error]

    assert browser_thread.run(in_context(site, scenario)) == []
    answered = [call["response"] for call in captcha_kit.standin.calls]
    assert answered[-1].startswith("pass-") and len(answered) == 2  # signup's, then the login's
