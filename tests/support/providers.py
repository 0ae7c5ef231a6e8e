"""Pytest fixtures that run real stand-ins for Google (OIDC) and GitHub on 127.0.0.1.

Import them into a conftest (or a test module):

    from tests.support.providers import github_server, oidc_server  # noqa: F401

`oidc_server` (session scope): an `OidcServer`, oidc-provider on Node
(tests/support/oidc_provider), whose
one client is `OIDC_CLIENT_ID` / `OIDC_CLIENT_SECRET` with the redirect URIs in
`OIDC_REDIRECT_URIS` (read when the fixture starts). Point the app at `oidc_server.metadata_url`.
Its account (`next_login`) stays until changed: a test that changes it, or that calls
`deny_next()` without using it, should take `oidc_server_clean` instead, which resets it before
and after the test. More redirect URIs: `oidc_server.add_redirect_uris(...)`, or a server of
your own with `start_oidc_server(redirect_uris)` (a context manager) or `oidc_server_factory`.

`github_server` (function scope): the session's `FakeGitHub`, `reset()` before and after each
test, so every test starts on the default account with no pending deny/failure/delay and nothing
recorded. `github_server_session` (session scope) is the same object without the resets, for
session-scoped fixtures (a real app server started once must know the URLs at start).

`follow_authorization(authorize_url, redirect_uri)` walks a browser's redirects through either
provider and returns the URL the provider sends back to `redirect_uri` (with `code` or `error`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import requests

from tests.support.fake_github import FakeGitHub
from tests.support.node import NpmError, npm_ci

OIDC_DIR = Path(__file__).resolve().parent / "oidc_provider"
OIDC_CLIENT_ID = "svc-test-client"
OIDC_CLIENT_SECRET = "svc-test-secret"
OIDC_REDIRECT_URIS = ["http://127.0.0.1:5000/api/v2/auth/google/callback"]
OIDC_START_TIMEOUT = 60.0  # seconds for `node server.js` to print "ready"

GITHUB_CLIENT_ID = "svc-test-github-client"
GITHUB_CLIENT_SECRET = "svc-test-github-secret"

HTTP_TIMEOUT = 10.0


class ProviderStartError(RuntimeError):
    """A stand-in could not be installed or started; the message carries its output."""


# -- the OIDC provider (Node) -------------------------------------------------------------------


def ensure_oidc_node_modules() -> None:
    """`npm ci` in tests/support/oidc_provider when node_modules is missing or older than the lock
    file."""
    try:
        npm_ci(OIDC_DIR)
    except NpmError as error:
        raise ProviderStartError(str(error)) from error


class OidcServer:
    """A running `node server.js`: the issuer, its client, and the test controls."""

    def __init__(self, process: subprocess.Popen[bytes], log_path: Path, issuer: str,
                 client_id: str, client_secret: str, redirect_uris: list[str]) -> None:
        self.process = process
        self.log_path = log_path
        self.issuer = issuer
        self.metadata_url = issuer + "/.well-known/openid-configuration"
        self.client_id = client_id
        self.client_secret = client_secret
        self.redirect_uris = list(redirect_uris)

    def __repr__(self) -> str:
        return f"<OidcServer {self.issuer} pid={self.process.pid}>"

    def __enter__(self) -> OidcServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _call(self, method: str, path: str, json: Any = None) -> Any:
        with requests.request(method, self.issuer + path, json=json,
                              timeout=HTTP_TIMEOUT) as response:
            response.raise_for_status()
            return response.json()

    def next_login(self, **claims: Any) -> None:
        """Set the account the following logins sign in as (until changed or reset).

        `sub` is required; the other claims (email, email_verified, name, given_name,
        family_name, picture, locale, hd) are given as they are, none filled in.
        """
        self._call("POST", "/test/next-login", claims)

    def deny_next(self) -> None:
        """The next authorization ends with `error=access_denied` at the redirect_uri."""
        self._call("POST", "/test/deny-next")

    def last_authorize(self) -> dict[str, str] | None:
        """The query of the last GET authorization request (None before the first)."""
        result: dict[str, str] | None = self._call("GET", "/test/last-authorize")
        return result

    def add_redirect_uris(self, *uris: str) -> None:
        """Allow more redirect URIs for the client (e.g. an app server on another port)."""
        self._call("POST", "/test/redirect-uris", {"redirect_uris": list(uris)})

    def reset(self) -> None:
        """Default account, no pending denial, nothing recorded, no added redirect URIs."""
        self._call("POST", "/test/reset")

    def output(self) -> str:
        """What the server printed so far (stdout and stderr)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log_path.unlink(missing_ok=True)


def start_oidc_server(redirect_uris: list[str] | None = None, *,
                      client_id: str = OIDC_CLIENT_ID, client_secret: str = OIDC_CLIENT_SECRET,
                      timeout: float = OIDC_START_TIMEOUT) -> OidcServer:
    """Start `node server.js` on a free port; the caller stops it (`stop()` or `with`)."""
    ensure_oidc_node_modules()
    node = shutil.which("node")
    if node is None:
        raise ProviderStartError("node is not on PATH: Node.js is needed for the OIDC stand-in")
    uris = list(OIDC_REDIRECT_URIS if redirect_uris is None else redirect_uris)
    command = [node, "server.js", "--port", "0",
               "--client-id", client_id, "--client-secret", client_secret]
    for uri in uris:
        command += ["--redirect-uri", uri]

    fd, name = tempfile.mkstemp(prefix="svc-oidc-provider-", suffix=".log")
    log_path = Path(name)
    with os.fdopen(fd, "wb") as log:  # the child keeps its own copy of the descriptor
        process = subprocess.Popen(command, cwd=OIDC_DIR, stdin=subprocess.DEVNULL,
                                   stdout=log, stderr=subprocess.STDOUT)
    server = None
    deadline = time.monotonic() + timeout
    try:
        while server is None:
            for line in log_path.read_text(errors="replace").splitlines():
                if line.startswith("ready "):
                    server = OidcServer(process, log_path, line.split()[1].rstrip("/"),
                                        client_id, client_secret, uris)
                    break
            else:
                if process.poll() is not None:
                    raise ProviderStartError(
                        f"the OIDC stand-in exited with {process.returncode} before it was ready:"
                        f"\n{log_path.read_text(errors='replace')}")
                if time.monotonic() > deadline:
                    raise ProviderStartError(
                        f"the OIDC stand-in was not ready within {timeout:.0f}s:"
                        f"\n{log_path.read_text(errors='replace')}")
                time.sleep(0.05)
    except BaseException:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=5)
        log_path.unlink(missing_ok=True)
        raise
    return server


@pytest.fixture(scope="session")
def oidc_server() -> Iterator[OidcServer]:
    """The session's OIDC stand-in, with redirect URIs `OIDC_REDIRECT_URIS`."""
    with start_oidc_server(OIDC_REDIRECT_URIS) as server:
        yield server


@pytest.fixture
def oidc_server_clean(oidc_server: OidcServer) -> Iterator[OidcServer]:
    """`oidc_server`, reset before and after the test."""
    oidc_server.reset()
    yield oidc_server
    oidc_server.reset()


@pytest.fixture
def oidc_server_factory() -> Iterator[Callable[..., OidcServer]]:
    """`start_oidc_server` whose servers are stopped after the test."""
    started: list[OidcServer] = []

    def start(redirect_uris: list[str] | None = None, **options: Any) -> OidcServer:
        server = start_oidc_server(redirect_uris, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


# -- the fake GitHub (in this process) ----------------------------------------------------------


@pytest.fixture(scope="session")
def github_server_session() -> Iterator[FakeGitHub]:
    """The session's fake GitHub, never reset: for session-scoped fixtures."""
    with FakeGitHub(GITHUB_CLIENT_ID, GITHUB_CLIENT_SECRET).start() as github:
        yield github


@pytest.fixture
def github_server(github_server_session: FakeGitHub) -> Iterator[FakeGitHub]:
    """The session's fake GitHub, reset before and after the test."""
    github_server_session.reset()
    yield github_server_session
    github_server_session.reset()


def github_settings(server: FakeGitHub) -> dict[str, object]:
    """The app's settings that send GitHub sign-ins to the fake."""
    return {"GITHUB_CLIENT_ID": server.client_id, "GITHUB_CLIENT_SECRET": server.client_secret,
            "GITHUB_AUTHORIZE_URL": server.authorize_url, "GITHUB_TOKEN_URL": server.token_url,
            "GITHUB_API_URL": server.api_url}


# -- driving a browser's part -------------------------------------------------------------------


def _same_endpoint(url: str, redirect_uri: str) -> bool:
    a, b = urlsplit(url), urlsplit(redirect_uri)
    return (a.scheme, a.netloc, a.path) == (b.scheme, b.netloc, b.path)


def follow_authorization(authorize_url: str, redirect_uri: str, *,
                         session: requests.Session | None = None, max_hops: int = 10,
                         timeout: float = HTTP_TIMEOUT) -> str:
    """Follow the provider's redirects from `authorize_url` until one goes to `redirect_uri`.

    Returns that URL (the app's callback with `code`/`state`, or `error`) without requesting it.
    Cookies are kept in `session` (a new one if None). Fails on a non-redirect answer.
    """
    owned = session is None
    http = requests.Session() if session is None else session
    try:
        url = authorize_url
        for _ in range(max_hops):
            if _same_endpoint(url, redirect_uri):
                return url
            with http.get(url, allow_redirects=False, timeout=timeout) as response:
                location = response.headers.get("Location")
                if response.status_code not in (301, 302, 303, 307, 308) or not location:
                    raise AssertionError(
                        f"GET {url} answered {response.status_code} without a redirect:\n"
                        f"{response.text[:2000]}")
            url = urljoin(url, location)
        raise AssertionError(f"no redirect to {redirect_uri} within {max_hops} hops (at {url})")
    finally:
        if owned:
            with contextlib.suppress(Exception):
                http.close()
