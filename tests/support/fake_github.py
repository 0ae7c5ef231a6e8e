"""A fake GitHub for tests: OAuth 2 web flow (with PKCE) and the two REST endpoints svc-auth reads.

Two threaded HTTP servers on 127.0.0.1 share one state, as github.com and api.github.com do:

- the web server: `GET /login/oauth/authorize` (auto-approved at once, as the next account) and
  `POST /login/oauth/access_token`;
- the API server: `GET /user` and `GET /user/emails`.

`FakeGitHub.start()` starts both; the test process drives it through its Python API:
`next_login(...)`, `deny_next()`, `fail_token_next(status)`, `delay_token_next(seconds)`,
`last_authorize`, `token_requests`, `reset()`, and `stop()`.

Where it is stricter than GitHub, it says so:
- PKCE is required (`require_pkce`, True by default): an authorize request without an S256
  `code_challenge` is sent back with `error=invalid_request`. GitHub makes PKCE optional.
- A code is spent the first time it is presented, even if that exchange fails.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import hashlib
import hmac
import json
import secrets
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit, urlunsplit

from tests.support.http import serving_thread

DEFAULT_CLIENT_ID = "svc-test-github-client"
DEFAULT_CLIENT_SECRET = "svc-test-github-secret"
CODE_TTL = 600.0  # GitHub's codes live ten minutes

DOCS = "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors"
TOKEN_ERRORS = {
    "incorrect_client_credentials": (
        "The client_id and/or client_secret passed are incorrect.",
        f"{DOCS}/#incorrect-client-credentials",
    ),
    "redirect_uri_mismatch": (
        "The redirect_uri MUST match the registered callback URL for this application.",
        f"{DOCS}/#redirect-uri-mismatch2",
    ),
    "bad_verification_code": (
        "The code passed is incorrect or expired.",
        f"{DOCS}/#bad-verification-code",
    ),
    "unsupported_grant_type": (
        "The grant type is not supported.",
        f"{DOCS}/#unsupported-grant-type",
    ),
}


def default_account() -> dict[str, Any]:
    return {
        "id": 4242,
        "login": "octo",
        "name": "Octo Cat",
        "email": None,
        "emails": [
            {"email": "octo@example.com", "primary": True, "verified": True,
             "visibility": "public"},
        ],
    }


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass
class _Code:
    client_id: str
    redirect_uri: str | None
    code_challenge: str | None
    scope: str
    account: dict[str, Any]
    expires_at: float


@dataclass
class _Token:
    scopes: list[str]
    account: dict[str, Any]


@dataclass
class _State:
    account: dict[str, Any] = field(default_factory=default_account)
    deny_next: bool = False
    fail_token_status: int | None = None
    delay_token_seconds: float = 0.0
    last_authorize: dict[str, str] | None = None
    token_requests: list[dict[str, str]] = field(default_factory=list)
    codes: dict[str, _Code] = field(default_factory=dict)
    tokens: dict[str, _Token] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass  # quiet: tests read `last_authorize` and `token_requests` instead

    @property
    def github(self) -> FakeGitHub:
        return self.server.github

    def _send(self, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(body).encode(), "application/json; charset=utf-8", headers)

    def send_text(self, status: int, text: str) -> None:
        self._send(status, text.encode(), "text/plain; charset=utf-8")

    def redirect(self, location: str) -> None:
        self._send(302, b"", "text/html; charset=utf-8", {"Location": location})

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        self.github._dispatch_get(self, self.server.role, path, dict(parse_qsl(query)))

    def do_POST(self) -> None:
        path, _, query = self.path.partition("?")
        body = self.read_body()
        self.github._dispatch_post(self, self.server.role, path, dict(parse_qsl(query)), body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exception(), ConnectionError):
            return  # the client went away (a test's timeout): nothing to report
        super().handle_error(request, client_address)

    def __init__(self, github: FakeGitHub, role: str) -> None:
        self.github = github
        self.role = role
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class FakeGitHub:
    """The fake GitHub: `start()` it, point the app at `authorize_url`, `token_url`, `api_url`."""

    def __init__(self, client_id: str = DEFAULT_CLIENT_ID,
                 client_secret: str = DEFAULT_CLIENT_SECRET,
                 redirect_uris: list[str] | None = None, *, require_pkce: bool = True) -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        # None: any redirect_uri is accepted at authorize (it must still match at the token step).
        self.redirect_uris = redirect_uris
        self.require_pkce = require_pkce
        self._lock = threading.Lock()
        self._state = _State()
        self._servers: list[_Server] = []
        self._threads: list[threading.Thread] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeGitHub:
        if self._servers:
            raise RuntimeError("already started")
        for role in ("web", "api"):
            server = _Server(self, role)
            thread = serving_thread(server, f"fake-github-{role}")
            thread.start()
            self._servers.append(server)
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
        for thread in self._threads:
            thread.join(timeout=5)
        for server in self._servers:
            server.server_close()
        self._servers.clear()
        self._threads.clear()

    def __enter__(self) -> FakeGitHub:
        return self.start() if not self._servers else self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def web_url(self) -> str:
        return self._servers[0].base_url

    @property
    def authorize_url(self) -> str:
        return self.web_url + "/login/oauth/authorize"

    @property
    def token_url(self) -> str:
        return self.web_url + "/login/oauth/access_token"

    @property
    def api_url(self) -> str:
        return self._servers[1].base_url

    # -- controls -------------------------------------------------------------------------------

    def next_login(self, id: int | None = None, login: str | None = None,  # noqa: A002
                   name: str | None = None, emails: list[dict[str, Any]] | None = None,
                   **profile: Any) -> None:
        """Set the account that the following authorizations approve, until changed or `reset()`.

        Unnamed fields keep the default account's values. `email` (the public profile email that
        `/user` shows) defaults to None; other keyword arguments are added to `/user` as they are.
        """
        account = default_account()
        for key, value in {"id": id, "login": login, "name": name, "emails": emails}.items():
            if value is not None:
                account[key] = value
        account.update(profile)
        with self._lock:
            self._state.account = account

    def deny_next(self) -> None:
        """The next authorize request is sent back with `error=access_denied`."""
        with self._lock:
            self._state.deny_next = True

    def fail_token_next(self, status: int = 500) -> None:
        """The next token request answers this HTTP status, without touching its code."""
        with self._lock:
            self._state.fail_token_status = status

    def delay_token_next(self, seconds: float) -> None:
        """The next token request waits this long before it answers."""
        with self._lock:
            self._state.delay_token_seconds = float(seconds)

    @property
    def last_authorize(self) -> dict[str, str] | None:
        """The query of the last authorize request, as a dict (None before the first)."""
        with self._lock:
            last = self._state.last_authorize
            return dict(last) if last is not None else None

    @property
    def token_requests(self) -> list[dict[str, str]]:
        """The form bodies of the token requests received so far, oldest first."""
        with self._lock:
            return [dict(body) for body in self._state.token_requests]

    def reset(self) -> None:
        """Default account; no pending deny, failure or delay; nothing recorded; no live code or
        token."""
        with self._lock:
            self._state = _State()

    # -- the endpoints --------------------------------------------------------------------------

    def _dispatch_get(self, handler: _Handler, role: str, path: str, query: dict[str, str]) -> None:
        if role == "web" and path == "/login/oauth/authorize":
            self._authorize(handler, query)
        elif role == "api" and path == "/user":
            self._user(handler)
        elif role == "api" and path == "/user/emails":
            self._emails(handler)
        else:
            self._not_found(handler, role)

    def _dispatch_post(self, handler: _Handler, role: str, path: str, query: dict[str, str],
                       body: bytes) -> None:
        if role == "web" and path == "/login/oauth/access_token":
            self._access_token(handler, query, body)
        else:
            self._not_found(handler, role)

    @staticmethod
    def _not_found(handler: _Handler, role: str) -> None:
        if role == "api":
            handler.send_json(404, {"message": "Not Found",
                                    "documentation_url": "https://docs.github.com/rest",
                                    "status": "404"})
        else:
            handler.send_text(404, "Not Found")

    def _authorize(self, handler: _Handler, query: dict[str, str]) -> None:
        with self._lock:
            self._state.last_authorize = dict(query)

        if query.get("client_id") != self.client_id:
            handler.send_text(404, "Not Found: unknown client_id")
            return
        redirect_uri = query.get("redirect_uri")
        if not redirect_uri:
            if not self.redirect_uris:
                handler.send_text(400, "redirect_uri is required (no callback URL is registered)")
                return
            redirect_uri = self.redirect_uris[0]
        elif self.redirect_uris is not None and redirect_uri not in self.redirect_uris:
            handler.send_text(400, "The redirect_uri is not associated with this application.")
            return

        with self._lock:
            deny = self._state.deny_next
            self._state.deny_next = False
            account = copy.deepcopy(self._state.account)
        params: dict[str, str] = {}
        challenge = query.get("code_challenge")
        method = query.get("code_challenge_method")
        if deny:
            params = {"error": "access_denied",
                      "error_description": "The user has denied your application access.",
                      "error_uri": f"{DOCS}/#access-denied"}
        elif challenge and method != "S256":
            params = {"error": "invalid_request",
                      "error_description": "code_challenge_method must be S256"}
        elif self.require_pkce and not challenge:
            params = {"error": "invalid_request",
                      "error_description": "code_challenge is required (fake GitHub: PKCE on)"}
        else:
            code = secrets.token_hex(10)
            with self._lock:
                self._state.codes[code] = _Code(
                    client_id=self.client_id,
                    redirect_uri=query.get("redirect_uri"),
                    code_challenge=challenge,
                    scope=query.get("scope", ""),
                    account=account,
                    expires_at=time.monotonic() + CODE_TTL,
                )
            params = {"code": code}
        if "state" in query:
            params["state"] = query["state"]
        handler.redirect(_add_query(redirect_uri, params))

    def _access_token(self, handler: _Handler, query: dict[str, str], raw: bytes) -> None:
        content_type = handler.headers.get("Content-Type", "")
        if "json" in content_type:
            try:
                parsed = json.loads(raw or b"{}")
            except ValueError:
                parsed = None
            form = {k: str(v) for k, v in parsed.items()} if isinstance(parsed, dict) else {}
        else:
            form = dict(parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True))
        params = {**query, **form}

        with self._lock:
            self._state.token_requests.append(dict(form))
            fail = self._state.fail_token_status
            self._state.fail_token_status = None
            delay = self._state.delay_token_seconds
            self._state.delay_token_seconds = 0.0

        if delay:
            time.sleep(delay)
        if fail is not None:
            handler.send_json(fail, {"message": f"fake GitHub: forced failure {fail}"})
            return

        wants_json = "application/json" in handler.headers.get("Accept", "")

        def answer(body: dict[str, str]) -> None:
            if wants_json:
                handler.send_json(200, body)
            else:
                handler._send(200, urlencode(body).encode(),
                              "application/x-www-form-urlencoded; charset=utf-8")

        def error(name: str) -> None:
            description, uri = TOKEN_ERRORS[name]
            answer({"error": name, "error_description": description, "error_uri": uri})

        # client_secret_post, or client_secret_basic with the pair form-encoded (RFC 6749) or not.
        candidates = [(params.get("client_id"), params.get("client_secret"))]
        basic = _basic_credentials(handler.headers.get("Authorization"))
        if basic is not None:
            if params.get("client_secret") is not None:
                error("incorrect_client_credentials")  # two ways at once
                return
            user, password = basic
            candidates = [(user, password), (unquote_plus(user), unquote_plus(password))]
            if params.get("client_id") not in (None, *{user, unquote_plus(user)}):
                error("incorrect_client_credentials")
                return
        if not any(cid == self.client_id and secret is not None
                   and hmac.compare_digest(secret.encode(), self.client_secret.encode())
                   for cid, secret in candidates):
            error("incorrect_client_credentials")
            return
        client_id = self.client_id
        grant_type = params.get("grant_type")
        if grant_type not in (None, "", "authorization_code"):
            error("unsupported_grant_type")
            return

        with self._lock:
            code = self._state.codes.pop(params.get("code", ""), None)  # single use, pass or fail
        if code is None or code.expires_at < time.monotonic() or code.client_id != client_id:
            error("bad_verification_code")
            return
        redirect_uri = params.get("redirect_uri")
        if redirect_uri and code.redirect_uri and redirect_uri != code.redirect_uri:
            error("redirect_uri_mismatch")
            return
        verifier = params.get("code_verifier")
        if code.code_challenge is not None:
            if not verifier or not hmac.compare_digest(s256(verifier), code.code_challenge):
                error("bad_verification_code")
                return
        elif verifier:
            error("bad_verification_code")
            return

        scopes = [s for s in code.scope.replace(",", " ").split() if s]
        token = "gho_" + secrets.token_hex(18)
        with self._lock:
            self._state.tokens[token] = _Token(scopes=scopes, account=code.account)
        answer({"access_token": token, "token_type": "bearer", "scope": ",".join(scopes)})

    def _authenticated(self, handler: _Handler) -> _Token | None:
        header = handler.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        token = None
        if scheme.lower() in ("bearer", "token") and value.strip():
            with self._lock:
                token = self._state.tokens.get(value.strip())
        if token is None:
            handler.send_json(401, {"message": "Bad credentials",
                                    "documentation_url": "https://docs.github.com/rest",
                                    "status": "401"})
        return token

    def _user(self, handler: _Handler) -> None:
        token = self._authenticated(handler)
        if token is None:
            return
        body = {key: value for key, value in token.account.items() if key != "emails"}
        handler.send_json(200, body, {"X-OAuth-Scopes": ", ".join(token.scopes)})

    def _emails(self, handler: _Handler) -> None:
        token = self._authenticated(handler)
        if token is None:
            return
        if not {"user", "user:email"} & set(token.scopes):
            # What GitHub answers when the token lacks the scope.
            self._not_found(handler, "api")
            return
        handler.send_json(200, token.account["emails"], {"X-OAuth-Scopes": ", ".join(token.scopes)})


def _add_query(url: str, params: dict[str, str]) -> str:
    parts = urlsplit(url)
    query = "&".join(filter(None, [parts.query, urlencode(params)]))
    return urlunsplit(parts._replace(query=query))


def _basic_credentials(header: str | None) -> tuple[str, str] | None:
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "basic":
        return None
    with contextlib.suppress(ValueError):
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        user, sep, password = decoded.partition(":")
        if sep:
            return user, password
    return None
