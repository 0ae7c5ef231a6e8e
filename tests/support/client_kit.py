"""What the client-kit tests (tests/system/client_kit) share besides their fixtures: the example
client
sites on werkzeug servers, the `Kit` (the service and the sites), and Chromium on a thread of its
own (`BrowserThread`).

`clients/python` goes on sys.path, so `svc_auth_client` imports without being installed.
"""

from __future__ import annotations

import importlib.util
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TypeVar

import pytest
import requests
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from werkzeug.serving import BaseWSGIServer, make_server

from tests.support.accounts import PASSWORD
from tests.support.browser import CHROMIUM, CHROMIUM_ARGS
from tests.support.http import serving_thread
from tests.support.server import ROOT, flask_cli
from tests.support.sqlite_server import Server

CLIENTS = ROOT / "clients" / "python"
if str(CLIENTS) not in sys.path:
    sys.path.insert(0, str(CLIENTS))

SITE_APP = ROOT / "examples" / "client_site" / "app.py"
HTTP_TIMEOUT = 10.0
SITE_NAMES = ("symbols", "footprints")

BROWSER_START_TIMEOUT = 60.0
SCENARIO_TIMEOUT = 120.0

T = TypeVar("T")


def site_module() -> ModuleType:
    """examples/client_site/app.py as the module `client_site_app` (loaded once)."""
    name = "client_site_app"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SITE_APP)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


# -- the example sites -----------------------------------------------------------------------------


HARNESS_PATH = "/kit-harness"
HARNESS_PAGE = b"<!doctype html><html lang=en><title>harness</title></html>"


class _Slot:
    """A WSGI app filled in later: a site's port must be known (to register its origin with the
    service) before the service runs, and the site's app needs the service's address.

    It also answers HARNESS_PATH with a blank page at the site's origin, where a browser test
    can create an SvcAuth of its own. (Served for real rather than by a Playwright route:
    Chromium lets only a page that came from a loopback address fetch from one.)"""

    def __init__(self) -> None:
        self.app: Callable[..., Any] | None = None

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        if environ.get("PATH_INFO") == HARNESS_PATH:
            start_response("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                      ("Content-Length", str(len(HARNESS_PAGE))),
                                      ("Cache-Control", "no-store")])
            return [HARNESS_PAGE]
        assert self.app is not None, "the site's app is not set yet"
        return self.app(environ, start_response)


@dataclass
class RunningSite:
    name: str
    base_url: str
    pricing_url: str
    server: BaseWSGIServer = field(repr=False)
    thread: threading.Thread = field(repr=False)
    slot: _Slot = field(repr=False)

    @property
    def items(self) -> str:
        return self.name  # "symbols" or "footprints": /api/symbols, /api/my-symbols

    @property
    def callback(self) -> str:
        return f"{self.base_url}/auth/callback"

    def url(self, path: str) -> str:
        return self.base_url + path

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=10)
        self.server.server_close()


def bind_site(name: str) -> RunningSite:
    slot = _Slot()
    server = make_server("127.0.0.1", 0, slot, threaded=True)
    base_url = f"http://127.0.0.1:{server.server_port}"
    thread = serving_thread(server, f"site-{name}")
    return RunningSite(name, base_url, f"{base_url}/pricing", server, thread, slot)


@dataclass
class Kit:
    service: Server
    sites: dict[str, RunningSite]
    env: dict[str, str]  # the service's settings: enough to run its CLI on the same database

    @property
    def symbols(self) -> RunningSite:
        return self.sites["symbols"]

    @property
    def footprints(self) -> RunningSite:
        return self.sites["footprints"]

    def service_url(self, path: str) -> str:
        return self.service.url(path)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`flask --app wsgi ARGS` against the running service's database."""
        result = flask_cli(self.env, *args)
        assert result.returncode == 0, f"flask {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result

    def create_account(self, plan: str | None = None) -> str:
        """A new account (signed up through the API); its email."""
        email = f"kit-{uuid.uuid4().hex[:10]}@example.com"
        with requests.post(self.service_url("/api/v2/auth/signup"), timeout=HTTP_TIMEOUT,
                           json={"email": email, "password": PASSWORD,
                                 "full_name": "Kit Tester"}) as response:
            assert response.status_code == 201, response.text
        if plan is not None:
            self.cli("users", "set-plan", email, plan)
        return email

    def login(self, email: str) -> dict[str, Any]:
        """v1 login, as a client site's page does it."""
        with requests.post(self.service_url("/api/v1/auth/login"), timeout=HTTP_TIMEOUT,
                           json={"email": email, "password": PASSWORD,
                                 "captcha_token": ""}) as response:
            assert response.status_code == 200, response.text
            body: dict[str, Any] = response.json()
            return body


# -- the browser -----------------------------------------------------------------------------------


class BrowserThread:
    """Chromium under Playwright's sync API, owned by one thread; `run(fn)` calls `fn(browser)`
    there and returns its result (or raises its exception) here."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[Callable[[Any], Any], queue.Queue[Any]] | None] = (
            queue.Queue())
        started: queue.Queue[BaseException | None] = queue.Queue()
        self._thread = threading.Thread(target=self._main, args=(started,),
                                        name="client-kit-browser", daemon=True)
        self._thread.start()
        try:
            problem = started.get(timeout=BROWSER_START_TIMEOUT)
        except queue.Empty:
            pytest.fail(f"Chromium did not start within {BROWSER_START_TIMEOUT:.0f} s")
        if problem is not None:
            raise problem

    def _main(self, started: queue.Queue[BaseException | None]) -> None:

        try:
            driver = sync_playwright().start()
        except BaseException as error:  # noqa: BLE001 (handed to the test thread)
            started.put(error)
            return
        try:
            browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                             timeout=30_000)
        except BaseException as error:  # noqa: BLE001
            driver.stop()
            started.put(error)
            return
        started.put(None)
        try:
            while (job := self._jobs.get()) is not None:
                work, results = job
                try:
                    results.put((True, work(browser)))
                except BaseException as error:  # noqa: BLE001
                    results.put((False, error))
        finally:
            browser.close()
            driver.stop()

    def run(self, work: Callable[[Any], T], timeout: float = SCENARIO_TIMEOUT) -> T:
        results: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
        self._jobs.put((work, results))
        try:
            ok, value = results.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"the browser scenario took more than {timeout:.0f} s")
        if not ok:
            raise value
        result: T = value
        return result

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=30)


# Browser contexts for the kit's pages (they run in the browser thread) ------------------------

TIMEOUT_MS = 10_000


def new_context(browser: Browser, site: RunningSite) -> BrowserContext:
    context = browser.new_context()
    context.set_default_timeout(TIMEOUT_MS)
    context.set_default_navigation_timeout(TIMEOUT_MS)
    return context


def in_context(kit_site: RunningSite, scenario: Callable[[BrowserContext], Any]
               ) -> Callable[[Browser], Any]:
    def job(browser: Browser) -> Any:
        context = new_context(browser, kit_site)
        try:
            return scenario(context)
        finally:
            context.close()
    return job


def watch_errors(page: Page) -> list[str]:
    """Uncaught exceptions and console errors (CSP and CORS refusals among them). Chromium's
    "Failed to load resource" lines are left out: every 401 and 402 the tests cause, and a
    missing favicon, produce one."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text)
            if message.type == "error" and not message.text.startswith("Failed to load resource")
            else None)
    return errors


def open_site(context: BrowserContext, site: RunningSite, path: str = "/") -> Page:
    page = context.new_page()
    page.goto(site.url(path))
    page.wait_for_selector("body[data-ready=true]", state="attached")
    return page
