"""The README's "Add sign-in to your site in ten minutes", run as written against a fresh server
(tests/support/quickstart.py extracts the marked blocks): each path registers its site with the
command line, saves its files, serves the site, and a person signs in and out through it.

- Redirect and the client kit: the page in Chromium, through the hosted login form.
- OpenID Connect with authlib's Flask client: an HTTP client as the browser, posting the hosted
  login form; the site checks the ID token, then signs out through the service.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from urllib.parse import urljoin

import pytest
import requests
from playwright.sync_api import expect

from tests.support.accounts import PASSWORD
from tests.support.browser import CHROMIUM
from tests.support.client_kit import BrowserThread
from tests.support.quickstart import (
    RunningQuickstart,
    quickstarts,
    start,
    wait_until_serving,
)
from tests.support.servers import free_port
from tests.support.sqlite_server import Server, new_workdir, start_server

pytestmark = pytest.mark.e2e

TIMEOUT = 10


@pytest.fixture(scope="module")
def service() -> Iterator[Server]:
    workdir = new_workdir("quickstart-service")
    try:
        running = start_server(workdir, workers=2)
        yield running
        running.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _run(path: str, service: Server) -> Iterator[tuple[RunningQuickstart, str]]:
    workdir = new_workdir(f"quickstart-{path}")
    port = free_port()
    running = start(quickstarts()[path], workdir, service.base_url.removeprefix("http://"), port,
                    {**service.settings, "SVC_PUBLIC_URL": service.base_url})
    try:
        site = f"http://127.0.0.1:{port}"
        wait_until_serving(running, site + "/")
        yield running, site
    finally:
        running.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _account(service: Server, email: str) -> None:
    answer = requests.post(service.url("/api/v2/auth/signup"), timeout=TIMEOUT,
                           json={"email": email, "password": PASSWORD, "full_name": "Ada"})
    assert answer.status_code == 201, answer.text


def test_the_readme_marks_both_paths_and_their_files():
    found = quickstarts()
    assert set(found) == {"redirect", "oidc"}
    assert set(found["redirect"].files) == {"../mysite/index.html"}
    assert set(found["oidc"].files) == {"../myapp/app.py"}
    for path in found.values():
        assert path.shell[0].startswith((".venv/bin/flask --app wsgi sites add",
                                         "export CLIENT_SECRET=$(.venv/bin/flask --app wsgi sites"))


@pytest.fixture
def redirect_site(service: Server) -> Iterator[tuple[RunningQuickstart, str]]:
    yield from _run("redirect", service)


@pytest.fixture
def oidc_site(service: Server) -> Iterator[tuple[RunningQuickstart, str]]:
    yield from _run("oidc", service)


def test_the_redirect_quickstart_signs_in_and_out_with_the_client_kit(service, redirect_site):
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/install-test-tools")
    running, site = redirect_site
    email = "quickstart-redirect@example.com"
    _account(service, email)

    def journey(browser):  # type: ignore[no-untyped-def]
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(site + "/")
            expect(page.locator("#who")).to_have_text("Signed out.")
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(re.escape(service.url("/login")) + r"\?"))
            page.get_by_label("Email").fill(email)
            page.get_by_label("Password", exact=True).fill(PASSWORD)
            page.get_by_role("button", name="Sign in", exact=True).click()
            expect(page.locator("#who")).to_have_text(f"Signed in as {email}.", timeout=15_000)
            assert page.url == site + "/"  # the code and state are out of the address bar
            stored = page.evaluate("() => localStorage.getItem('svc_refresh_token')")
            # Through the service's sign-out and back to the page, signed out.
            with page.expect_navigation(url=site + "/"):
                page.get_by_role("button", name="Sign out").click()
            expect(page.locator("#who")).to_have_text("Signed out.")
            assert page.evaluate("() => localStorage.getItem('svc_access_token')") is None
            # The hosted session ended too: the next sign-in asks for the password again.
            page.get_by_role("button", name="Sign in").click()
            page.wait_for_url(re.compile(re.escape(service.url("/login")) + r"\?"))
            expect(page.get_by_label("Password", exact=True)).to_be_visible()
            return stored
        finally:
            context.close()

    browser = BrowserThread()
    try:
        refresh_token = browser.run(journey)
    finally:
        browser.close()
    assert refresh_token, running.output()
    # Signing out ended the session at the service: its refresh token is refused.
    refused = requests.post(service.url("/api/v2/auth/refresh"), timeout=TIMEOUT,
                            json={"refresh_token": refresh_token})
    assert refused.status_code == 401, refused.text


def _follow(browser: requests.Session, url: str) -> requests.Response:
    """Follow redirects by hand, so that a step that fails shows where."""
    for _ in range(10):
        answer = browser.get(url, allow_redirects=False, timeout=TIMEOUT)
        if answer.status_code not in (302, 303):
            return answer
        url = urljoin(url, answer.headers["Location"])
    raise AssertionError(f"too many redirects, at {url}")


def test_the_oidc_quickstart_signs_in_and_out_with_authlib(service, oidc_site):
    running, site = oidc_site
    email = "quickstart-oidc@example.com"
    _account(service, email)
    browser = requests.Session()  # the person's browser, for the site and the service alike
    assert "Signed out." in _follow(browser, site + "/").text

    login_page = _follow(browser, site + "/login")
    assert login_page.url.startswith(service.url("/login")), running.output()
    csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', login_page.text).group(1)
    signed_in = browser.post(service.url("/login"), allow_redirects=False, timeout=TIMEOUT,
                             data={"csrf_token": csrf, "email": email, "password": PASSWORD})
    assert signed_in.status_code in (302, 303), signed_in.text
    home = _follow(browser, urljoin(service.base_url, signed_in.headers["Location"]))
    assert home.url == site + "/", running.output()
    assert f"Signed in as {email}." in home.text, running.output()

    out = _follow(browser, site + "/logout")
    assert out.url == site + "/" and "Signed out." in out.text, running.output()
    # The service's session ended too: a new sign-in asks for the password again.
    again = _follow(browser, site + "/login")
    assert again.url.startswith(service.url("/login")) and "csrf_token" in again.text, again.url
