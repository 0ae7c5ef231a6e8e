"""The API reference, /api/docs, in Chromium: Swagger UI from our own origin under the page's own
policy (no request to another origin, no policy violation), showing an operation's description,
its request's example and its errors' examples, and trying a request against the same origin."""

from __future__ import annotations

import pytest
import requests
from playwright.sync_api import Page, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.browser import HTTP_TIMEOUT, Site

pytestmark = pytest.mark.e2e

REFERENCE_POLICY = ("default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; "
                    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
                    "object-src 'none'")
# Every refusal of the policy, as the page sees it (not only what reaches the console).
RECORD_VIOLATIONS = """window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => window.__violations.push(
    `${event.violatedDirective} ${event.blockedURI}`));"""


@pytest.fixture
def reference(page: Page, site: Site) -> tuple[Page, list[str]]:
    """The reference page, loaded, and every address it asked for (the page and everything it
    loads and calls, as the test goes on)."""
    asked: list[str] = []
    page.on("request", lambda sent: asked.append(sent.url))
    page.add_init_script(RECORD_VIOLATIONS)
    response = page.goto(site.url("/api/docs"))
    assert response is not None and response.status == 200
    assert response.headers["content-security-policy"] == REFERENCE_POLICY
    expect(page.locator("#operations-v2-login")).to_be_visible()
    return page, asked


def _open(page: Page, operation: str) -> None:
    block = page.locator(f"#operations-{operation}")
    block.locator(".opblock-summary-control").click()
    expect(block.locator(".opblock-body")).to_be_visible()


def _nothing_foreign_nor_refused(page: Page, site: Site, asked: list[str]) -> None:
    foreign = [url for url in asked if not url.startswith(site.base_url + "/")]
    assert not foreign, f"requests to another origin: {foreign}"
    assert page.evaluate("window.__violations") == []


def test_it_shows_descriptions_and_examples_from_our_origin_alone(reference: tuple[Page, list[str]],
                                                                  site: Site):
    page, asked = reference
    _open(page, "v2-login")
    login = page.locator("#operations-v2-login")
    expect(login).to_contain_text("complete it with POST /api/v2/auth/mfa")  # its description
    expect(login.locator(".opblock-section-request-body")).to_contain_text(
        '"email": "ada@example.com"')  # the request's example
    unauthorized = login.locator(".responses-table tr.response[data-code='401']")
    expect(unauthorized).to_contain_text('"code": "invalid_credentials"')  # an error's example
    expect(unauthorized).to_contain_text("Incorrect email or password.")
    assert {site.url("/api/openapi.json"), site.url("/static/api_reference.js")} <= set(asked)
    _nothing_foreign_nor_refused(page, site, asked)


def test_a_request_tried_from_the_page_is_answered_on_it(reference: tuple[Page, list[str]],
                                                         site: Site):
    email = new_email("reference")
    with requests.post(site.url("/api/v2/auth/signup"), timeout=HTTP_TIMEOUT,
                       json={"email": email, "password": PASSWORD}) as answer:
        assert answer.status_code == 201, answer.text
        token = answer.json()["access_token"]
    page, asked = reference

    page.get_by_role("button", name="Authorize").first.click()
    bearer = page.locator(".auth-container").filter(has_text="(http, Bearer)")
    bearer.locator("#auth-bearer-value").fill(token)
    bearer.get_by_role("button", name="Apply credentials").click()
    bearer.get_by_role("button", name="Close").click()

    _open(page, "v2-verify")
    verify = page.locator("#operations-v2-verify")
    verify.get_by_role("button", name="Try it out").click()
    verify.get_by_role("button", name="Execute").click()
    answered = verify.locator(".live-responses-table")
    expect(answered.locator("tr.response .response-col_status")).to_have_text("200")
    expect(answered).to_contain_text(email)
    assert site.url("/api/v2/auth/verify") in asked
    _nothing_foreign_nor_refused(page, site, asked)
