"""Real-browser tests of the hosted pages: Debian's Chromium driven by Playwright, against a real
gunicorn server (tests/support/sqlite_server.py) and the local OpenID Connect server standing in for
Google (tests/support).

- `site` (session): a 1-worker server (rate limits on, counted in its database) with two
  client sites, `symbols` and `footprints`, whose
  redirect URIs (`site.symbols_cb`, `site.footprints_cb`) are served by a tiny HTTP server of the
  tests on 127.0.0.1 (`ClientSites`) with a small "client site" page; the tests read `code`,
  `provider` and `state` from its address. Mail goes to .eml files in `site.mail_dir`. Rate limits
  are on but generous (the rate-limit test starts its own server with low login limits).
- `browser` (session): Chromium from /usr/bin/chromium, never a Playwright browser download.
- `context` / `new_context` / `page`: a fresh browser context (its own cookies) per test, closed
  after it.
- `axe_source` (session): axe-core from npm (tests/system/browser/axe, pinned in its
package-lock.json),
  installed with `npm ci` when node_modules is missing or older than the lock.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

from tests.support.browser import (
    AXE_DIR,
    CHROMIUM,
    CHROMIUM_ARGS,
    DEFAULT_TIMEOUT_MS,
    GENEROUS_LIMITS,
    ClientSites,
    ContextFactory,
    Site,
    client_sites_setting,
)
from tests.support.node import NpmError, npm_ci
from tests.support.providers import OidcServer, start_oidc_server
from tests.support.sqlite_server import Server, ServerFactory, server_pool, start_server


@pytest.fixture
def server_factory() -> Iterator[ServerFactory]:
    """`server_factory(env={...}, workers=N)`: another server, stopped when the test ends."""
    with server_pool() as start:
        yield start


def _workdir(prefix: str) -> Path:
    # Not pytest's tmp_path (see tests/support/sqlite_server.py: other sessions prune old
    # pytest-N folders).
    return Path(tempfile.mkdtemp(prefix=f"svc-browser-{prefix}-"))


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
