"""The siteverify call (app/infra/captcha.py): the provider's answer as a dict, or None when it
gave none that can be read in time."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from app.infra.captcha import siteverify


class _Answers(BaseHTTPRequestHandler):
    body = b"{}"
    seen: list[str] = []

    def do_POST(self) -> None:  # noqa: N802  (http.server's name)
        length = int(self.headers["Content-Length"])
        _Answers.seen.append(self.rfile.read(length).decode())
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(_Answers.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Answers.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/siteverify"
    server.shutdown()
    server.server_close()
    thread.join(timeout=30)


def test_the_answer_is_the_providers_object(provider):
    _Answers.body = json.dumps({"success": True, "hostname": "auth.example"}).encode()
    assert siteverify(provider, "s3cret", "tok", "203.0.113.9", timeout=10) == {
        "success": True, "hostname": "auth.example"}
    assert _Answers.seen == ["secret=s3cret&response=tok&remoteip=203.0.113.9"]


@pytest.mark.parametrize("body", [b"not json", b"[true]"])
def test_an_answer_that_is_no_object_is_none(provider, body):
    _Answers.body = body
    assert siteverify(provider, "s3cret", "tok", None, timeout=10) is None


def test_a_provider_that_is_not_there_is_none():
    assert siteverify("http://127.0.0.1:9/siteverify", "s", "tok", None, timeout=10) is None
