"""A client site's endpoint for the tests: a real HTTP server on 127.0.0.1 that keeps every
request it gets and answers with the statuses it is told (then 200), or, while `hung`, answers
nothing until the test lets it go."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.http import serving_thread


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.statuses: list[int] = []  # answered in turn, then 200
        # Cleared: each request, once kept, waits without an answer until it is set again.
        self.answering = threading.Event()
        self.answering.set()
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._lock:
                    receiver.received.append(Received(
                        self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                receiver.answering.wait()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        serving_thread(self.server, "webhook-receiver").start()

    def wait_for(self, done: Callable[[list[Received]], bool], seconds: float = 60.0
                 ) -> list[Received]:
        """The requests received once `done(requests)` holds; AssertionError after `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self._lock:
                found = list(self.received)
            if done(found):
                return found
            time.sleep(0.01)
        raise AssertionError(f"not received in {seconds} s: {found}")

    def close(self) -> None:
        self.answering.set()  # a hung request ends, so that the server can stop
        self.server.shutdown()
        self.server.server_close()
