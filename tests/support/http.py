"""HTTP on 127.0.0.1 with the standard library only (urllib), so that a clean install's test and the
benchmark can use it too: one call, its status and its body read as JSON.

The tests that check whole responses (headers, cookies) use `requests` (tests/support/api.py)."""

from __future__ import annotations

import json
import socketserver
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

TIMEOUT = 15.0  # seconds, for any one request
# How often a test's own server looks for its shutdown(): socketserver's default, half a second,
# made every test that stopped a stand-in wait that long.
SHUTDOWN_POLL_SECONDS = 0.02


def serving_thread(server: socketserver.BaseServer, name: str) -> threading.Thread:
    """A daemon thread, not yet started, that serves `server` until its shutdown()."""
    return threading.Thread(target=server.serve_forever, name=name, daemon=True,
                            kwargs={"poll_interval": SHUTDOWN_POLL_SECONDS})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def call(method: str, url: str, body: Any = None, *, headers: dict[str, str] | None = None,
         form: dict[str, str] | None = None, timeout: float = TIMEOUT,
         empty: Any = None) -> tuple[int, Any]:
    """`method url` with a JSON `body` (or a urlencoded `form`); the status and the body read as
    JSON (`empty` when there is none; the text when it is not JSON). An error status is an
    answer too: only a failed connection raises (urllib.error.URLError, OSError)."""
    if form is not None:
        data: bytes | None = urllib.parse.urlencode(form).encode()
        content_type = "application/x-www-form-urlencoded"
    else:
        data = json.dumps(body).encode() if body is not None else None
        content_type = "application/json"
    sent = {"Accept": "application/json"}
    if data is not None:
        sent["Content-Type"] = content_type
    request = urllib.request.Request(url, data=data, method=method,  # noqa: S310 (127.0.0.1)
                                     headers={**sent, **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            status, raw = error.code, error.read()
    if not raw:
        return status, empty
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


def status_of(url: str, timeout: float = TIMEOUT) -> int | None:
    """The status GET `url` is answered with within `timeout` seconds; None when it is not
    (nothing listens yet, or no answer in time)."""
    try:
        return call("GET", url, timeout=timeout)[0]
    except (urllib.error.URLError, OSError):
        return None


def wait_until(condition: Callable[[], Any], timeout: float, what: str,
               interval: float = 0.05) -> Any:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(interval)


def bearer_of(tokens: dict[str, Any]) -> dict[str, str]:
    """The Authorization header for a sign-in's tokens (its `access_token`)."""
    return bearer(str(tokens["access_token"]))
