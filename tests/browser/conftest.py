"""Real-browser tests of the hosted pages: Debian's Chromium driven by Playwright, against a real
gunicorn server (tests/e2e's `start_server`) and the local OpenID Connect server standing in for
Google (tests/providers).

- `site` (session): a 1-worker server (rate limits are on, in memory: gunicorn.conf.py refuses
  more workers without Redis) with two client sites, `symbols` and `footprints`, whose
  redirect URIs (`site.symbols_cb`, `site.footprints_cb`) are served by a tiny HTTP server of the
  tests on 127.0.0.1 (`ClientSites`) with a small "client site" page; the tests read `code`,
  `provider` and `state` from its address. Mail goes to .eml files in `site.mail_dir`. Rate limits
  are on but generous (the rate-limit test starts its own server with low login limits).
- `browser` (session): Chromium from /usr/bin/chromium, never a Playwright browser download.
- `context` / `new_context` / `page`: a fresh browser context (its own cookies) per test, closed
  after it.
- `axe_source` (session): axe-core from npm (tests/browser/axe, pinned in its package-lock.json),
  installed with `npm ci` when node_modules is missing or older than the lock.
"""

from __future__ import annotations

import base64
import contextlib
import email
import email.policy
import hashlib
import json
import re
import secrets
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.e2e.conftest import Server, server_factory, start_server  # noqa: F401  (fixture)
from tests.providers.fixtures import OidcServer, start_oidc_server
from tests.support.node import NpmError, npm_ci

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium calls home (updates, sync, field trials) on a
# network that answers nothing.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

AXE_DIR = Path(__file__).resolve().parent / "axe"

# The client sites, `symbols` and `footprints`: a tiny HTTP server of the tests (ClientSites) on a
# port of its own, answering their redirect URIs with a small page. Not a port where nothing listens
# with `context.route` answering for it: Playwright's routes are not called for the requests a
# redirect makes (its own test "should not work with redirects"), and every way back to a client
# site is a redirect, so Chromium would go to the network and fail. (Nor port 9: Chromium refuses it
# as unsafe, net::ERR_UNSAFE_PORT.)
CLIENT_PAGE = (b"<!doctype html><html lang=en><meta charset=utf-8><title>client site</title>"
               b"<h1>Back at the client site</h1></html>")

# Rate limits on, and high enough that the suite never meets them (the rate-limit test starts a
# server of its own with low login limits).
GENEROUS_LIMITS = {
    "SVC_RATELIMIT_ENABLED": "true",
    "SVC_LIMIT_LOGIN": "1000 per minute",
    "SVC_LIMIT_LOGIN_IP": "1000 per minute",
    "SVC_LIMIT_LOGIN_FAILURES": "1000 per day",
    "SVC_LIMIT_SIGNUP": "1000 per hour",
    "SVC_LIMIT_FORGOT": "1000 per hour",
    "SVC_LIMIT_FORGOT_IP": "1000 per hour",
    "SVC_LIMIT_RESET": "1000 per minute",
    "SVC_LIMIT_EXCHANGE": "1000 per minute",
    "SVC_LIMIT_REFRESH": "1000 per minute",
}

PASSWORD = "correct horse battery staple"
DEFAULT_TIMEOUT_MS = 10_000
MAIL_TIMEOUT = 10.0  # seconds: the outbox sends in the background
HTTP_TIMEOUT = 10.0


# -- the client sites ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ClientVisit:
    path: str
    query: str
    headers: dict[str, str]


class ClientSites:
    """The client sites' callback pages on one local port: any GET gets CLIENT_PAGE, and is
    recorded (`visits`) so a test can check what the browser sent, e.g. no Referer."""

    def __init__(self) -> None:
        self.visits: list[ClientVisit] = []
        sites = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path, _, query = self.path.partition("?")
                sites.visits.append(ClientVisit(path, query, dict(self.headers.items())))
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(CLIENT_PAGE)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(CLIENT_PAGE)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="client-sites",
                                       daemon=True)
        self.thread.start()

    def redirect_uri(self, name: str) -> str:
        return f"{self.origin}/{name}/cb"

    def visit_with(self, code: str) -> ClientVisit:
        """The browser's request that brought `code` to a client site."""
        for visit in self.visits:
            if f"code={code}" in visit.query.split("&"):
                return visit
        raise AssertionError(f"no visit with code {code} among {len(self.visits)}")

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


# -- the server under test ------------------------------------------------------------------------


@dataclass
class Site:
    """The running service, its client sites, the Google stand-in, and the mail folder."""

    server: Server
    clients: ClientSites
    oidc: OidcServer
    mail_dir: Path

    @property
    def base_url(self) -> str:
        return self.server.base_url

    @property
    def symbols_cb(self) -> str:
        return self.clients.redirect_uri("symbols")

    @property
    def footprints_cb(self) -> str:
        return self.clients.redirect_uri("footprints")

    def url(self, path: str) -> str:
        return self.server.url(path)


def _workdir(prefix: str) -> Path:
    # Not pytest's tmp_path (see tests/e2e/conftest.py: other sessions prune old pytest-N folders).
    return Path(tempfile.mkdtemp(prefix=f"svc-browser-{prefix}-"))


def client_sites_setting(clients: ClientSites) -> str:
    return json.dumps({name: {"redirect_uris": [clients.redirect_uri(name)],
                              "origins": [clients.origin]}
                       for name in ("symbols", "footprints")})


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    workdir = _workdir("main")
    mail_dir = workdir / "mail"
    mail_dir.mkdir()
    clients = ClientSites()
    oidc: OidcServer | None = None
    server: Server | None = None
    try:
        # The stand-in must run before the service starts (the service reads its metadata URL);
        # the service's callback URL is allowed once start_server has chosen the service's port.
        oidc = start_oidc_server([clients.redirect_uri("unused")])
        server = start_server(workdir / "server", {
            "SVC_CLIENT_SITES": client_sites_setting(clients),
            "SVC_MAIL_URL": f"file://{mail_dir}",
            "SVC_MAIL_RETRY_DELAY": "0.1",
            "SVC_GOOGLE_CLIENT_ID": oidc.client_id,
            "SVC_GOOGLE_CLIENT_SECRET": oidc.client_secret,
            "SVC_GOOGLE_METADATA_URL": oidc.metadata_url,
            "SVC_PROVIDER_TIMEOUT": "5",
            **GENEROUS_LIMITS,
        }, workers=1)
        oidc.add_redirect_uris(server.url("/api/v2/auth/google/callback"))
        yield Site(server, clients, oidc, mail_dir)
    finally:
        if server is not None:
            server.stop()
        if oidc is not None:
            oidc.stop()
        clients.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# -- the browser ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's package (apt-get install -y chromium)"
                    " or run scripts/install-test-tools")
    manager = sync_playwright()
    driver = manager.start()
    try:
        yield driver
    finally:
        driver.stop()


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                          timeout=30_000)
    try:
        yield chromium
    finally:
        chromium.close()


ContextFactory = Callable[..., BrowserContext]


@pytest.fixture
def new_context(browser: Browser) -> Iterator[ContextFactory]:
    """`new_context(**options)`: a fresh context (a separate "device"), closed after the test."""
    opened: list[BrowserContext] = []

    def open_context(**options: Any) -> BrowserContext:
        context = browser.new_context(**options)
        opened.append(context)
        context.set_default_timeout(DEFAULT_TIMEOUT_MS)
        context.set_default_navigation_timeout(DEFAULT_TIMEOUT_MS)
        return context

    try:
        yield open_context
    finally:
        for context in opened:
            context.close()


@pytest.fixture
def context(new_context: ContextFactory) -> BrowserContext:
    return new_context()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


# -- axe-core -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def axe_source() -> str:
    try:
        npm_ci(AXE_DIR)
    except NpmError as error:
        pytest.fail(str(error))
    return (AXE_DIR / "node_modules" / "axe-core" / "axe.min.js").read_text(encoding="utf-8")


# -- helpers for the journeys ---------------------------------------------------------------------


def unique_email(label: str) -> str:
    return f"{label}-{uuid.uuid4().hex[:10]}@example.com"


def pkce_pair() -> tuple[str, str]:
    """A PKCE verifier and its S256 challenge (RFC 7636)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def create_account(site: Site, email_address: str, password: str = PASSWORD,
                   full_name: str = "Test Person") -> None:
    """An account made through the API (the sign-up page has its own test), whose API session
    is then ended, so the account's session list holds only what the browsers open."""
    with requests.post(site.url("/api/v2/auth/signup"), timeout=HTTP_TIMEOUT,
                       json={"email": email_address, "password": password,
                             "full_name": full_name}) as response:
        assert response.status_code == 201, response.text
        token = response.json()["access_token"]
    with requests.post(site.url("/api/v2/auth/logout?scope=local"), timeout=HTTP_TIMEOUT,
                       headers={"Authorization": f"Bearer {token}"}) as response:
        assert response.status_code == 204, response.text


def exchange(site: Site, code: str, provider: str, verifier: str | None = None,
             redirect_uri: str | None = None) -> requests.Response:
    """The client site's back end redeeming a handoff code."""
    body = {"code": code, "provider": provider}
    if verifier is not None:
        body["code_verifier"] = verifier
    if redirect_uri is not None:
        body["redirect_uri"] = redirect_uri
    with requests.post(site.url("/api/v2/auth/exchange-code"), json=body,
                       timeout=HTTP_TIMEOUT) as response:
        response.content  # noqa: B018  (read the body before the connection goes back)
        return response


def callback_params(url: str, expected: str) -> dict[str, str]:
    """The query the service sent back to the client site at `expected` (its redirect URI)."""
    parts = urlsplit(url)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == expected, url
    return {key: values[0] for key, values in parse_qs(parts.query).items()}


def wait_for_callback(page: Page, redirect_uri: str) -> dict[str, str]:
    """Wait until the browser is back at the client site; the query it brought."""
    page.wait_for_url(re.compile("^" + re.escape(redirect_uri) + r"\?"))
    # Really there: the client site's page, not Chromium's error page for that address.
    page.get_by_role("heading", name="Back at the client site").wait_for()
    return callback_params(page.url, redirect_uri)


def sign_in_with_form(page: Page, email_address: str, password: str) -> None:
    """Fill and send the sign-in form the page shows."""
    page.get_by_label("Email").fill(email_address)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in", exact=True).click()


def read_mail(site: Site, to: str, subject: str, timeout: float = MAIL_TIMEOUT) -> EmailMessage:
    """The newest message to `to` with `subject` in the mail folder, waiting for the outbox."""
    deadline = time.monotonic() + timeout
    while True:
        found: list[tuple[float, EmailMessage]] = []
        for path in site.mail_dir.glob("*.eml"):
            with contextlib.suppress(FileNotFoundError):
                message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
                assert isinstance(message, EmailMessage)
                if message["To"] == to and message["Subject"] == subject:
                    found.append((path.stat().st_mtime, message))
        if found:
            return max(found, key=lambda item: item[0])[1]
        if time.monotonic() > deadline:
            pytest.fail(f"no mail {subject!r} to {to} within {timeout:.0f} s "
                        f"({len(list(site.mail_dir.glob('*.eml')))} messages in the folder)")
        time.sleep(0.1)


def link_in(message: EmailMessage, path: str) -> str:
    """The link to `path` in the text part of a mail."""
    body = message.get_body(("plain",))
    assert body is not None, "the mail has no text part"
    text = body.get_content()
    found = re.search(r"https?://\S+" + re.escape(path) + r"\?\S+", text)
    assert found, f"no link to {path} in:\n{text}"
    return found.group(0)
