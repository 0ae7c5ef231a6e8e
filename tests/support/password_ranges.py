"""A local stand-in for a breached-password range API (the "Pwned Passwords" format):
`GET /range/{5 hex}` answers `SUFFIX:COUNT` lines for the passwords it lists, plus padding lines
with a count of 0 when asked for (`Add-Padding: true`), one of them for `PADDED`'s own hash.

It records every path and header it is asked with. `down` answers 503; `hang` holds each
answer until `release()` (or a minute), then answers as listed. Import the fixture
`breached_range` into a test module, and add `breached_settings(...)` to its settings."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.support.http import serving_thread

BREACHED = "Tr0ub4dor&3-summer"  # listed (count 3861)
PADDED = "a padded passphrase 42"  # only in a padding line (count 0): not listed
HANG_DEADLINE = 60.0  # seconds a hanging answer waits for release() at most


def sha1(password: str) -> str:
    return hashlib.sha1(password.encode(), usedforsecurity=False).hexdigest().upper()


class RangeStandIn:
    def __init__(self, listed: dict[str, int] | None = None) -> None:
        self.listed = {sha1(p): n for p, n in (listed or {BREACHED: 3861}).items()}
        self.padding = {sha1(PADDED): 0, "0" * 40: 0}
        self.down = False
        self.hang = False
        self.drip = False  # the answer a byte at a time, a little apart, for as long as read
        self._released = threading.Event()
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = serving_thread(self._server, "password-range-standin")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/range"

    @property
    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def start(self) -> RangeStandIn:
        self._thread.start()
        return self

    def release(self) -> None:
        self._released.set()

    def stop(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, headers: dict[str, str]) -> tuple[int, str]:
        self.requests.append((path, headers))
        if self.hang:
            self._released.wait(HANG_DEADLINE)
        if self.down:
            return 503, "unavailable"
        prefix = path.removeprefix("/range/")
        lines = [f"{digest[5:]}:{count}" for digest, count in self.listed.items()
                 if digest.startswith(prefix)]
        if headers.get("add-padding") == "true":
            lines += [f"{digest[5:]}:0" for digest in self.padding if digest.startswith(prefix)]
            lines += [f"{'F' * 35}:0", f"{'E' * 35}:0"]
        return 200, "\r\n".join(lines)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                headers = {name.lower(): value for name, value in self.headers.items()}
                status, text = standin.answer(self.path, headers)
                data = text.encode()
                if standin.drip:
                    self._drip()
                    return
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the service gave up waiting (hang)

            def _drip(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(10 ** 6))
                self.end_headers()
                stop = time.monotonic() + HANG_DEADLINE
                try:
                    while time.monotonic() < stop:
                        self.wfile.write(b"A")
                        self.wfile.flush()
                        time.sleep(0.05)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the service gave up

            def log_message(self, *_args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def breached_range() -> Iterator[RangeStandIn]:
    server = RangeStandIn().start()
    yield server
    server.stop()


def breached_settings(standin: RangeStandIn, timeout: float = 2.0) -> dict[str, Any]:
    """The settings of a service that looks passwords up in the stand-in."""
    return {"BREACHED_PASSWORDS_URL": standin.url, "BREACHED_PASSWORDS_TIMEOUT": timeout}
