"""What the real-browser tests (tests/system/browser) share besides their fixtures: the client
sites'
callback server, the running site, the Chromium settings and the helpers for the journeys."""

from __future__ import annotations

import contextlib
import email
import email.policy
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from playwright.sync_api import BrowserContext, Page, Response, expect

from tests.support.accounts import PASSWORD
from tests.support.api import new_email
from tests.support.http import serving_thread
from tests.support.providers import OidcServer
from tests.support.sqlite_server import Server

CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium calls home (updates, sync, field trials) on a
# network that answers nothing.
CHROMIUM_ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

AXE_DIR = Path(__file__).resolve().parents[1] / "system" / "browser" / "axe"

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

DEFAULT_TIMEOUT_MS = 10_000
MAIL_TIMEOUT = 60.0  # seconds: the outbox sends in the background, on a loaded machine too
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
        self.thread = serving_thread(self.httpd, "client-sites")
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


def client_sites_setting(clients: ClientSites) -> str:
    return json.dumps({name: {"redirect_uris": [clients.redirect_uri(name)],
                              "origins": [clients.origin]}
                       for name in ("symbols", "footprints")})


ContextFactory = Callable[..., BrowserContext]

# -- helpers for the journeys ---------------------------------------------------------------------


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


def signed_in(page: Page, site: Site, label: str) -> str:
    """A new account (its address), just signed in with its password; on its account page."""
    address = new_email(label)
    create_account(site, address)
    page.goto(site.url("/login"))
    sign_in_with_form(page, address, PASSWORD)
    expect(page).to_have_url(site.url("/account"))
    return address


def signed_in_and_confirmed(page: Page, site: Site, label: str) -> str:
    """A new account, just signed in with its password (a recent sign-in), whose owner then
    opened the confirmation link in that browser: the address is confirmed and the password
    shown to be its holder's (a second factor needs both). On its account page."""
    address = signed_in(page, site, label)
    page.goto(link_in(read_mail(site, address, "Confirm your email address"), "/confirm-email"))
    page.get_by_role("button", name="Confirm my address").click()
    expect(page.get_by_role("heading", name="Email confirmed")).to_be_visible()
    page.goto(site.url("/account"))
    return address


def totp_code(page: Page) -> str:
    """The code of the key the authenticator setup page shows, now (the server runs the real
    clock)."""
    import pyotp

    return pyotp.TOTP(page.locator("code.key").inner_text().replace(" ", "")).now()


def start_authenticator(page: Page) -> None:
    """From the account page of a confirmed account: set up an authenticator app and fill in its
    code; the form's "Turn on" is left to press."""
    page.get_by_role("button", name="Set up an authenticator app").click()
    page.get_by_label("Code").fill(totp_code(page))


def submit_button(page: Page, button: str) -> Callable[[], Response | None]:
    """A function that presses the form's button `button` and returns the page it loads."""
    def load() -> Response | None:
        with page.expect_navigation() as navigation:
            page.get_by_role("button", name=button, exact=True).click()
        return navigation.value
    return load


def user_id_of(site: Site, email: str) -> str:
    """The id of the account `email` in the site's database."""
    return str(site.server.query("SELECT id FROM users WHERE email = ?", email)[0][0])
