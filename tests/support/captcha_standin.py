"""A local stand-in for a captcha provider: its siteverify endpoint and its widget's script.

Siteverify answers by the secret first, as the providers document their test keys (Turnstile's
always-pass, always-fail and already-spent secrets, hCaptcha's test secret and token, reCAPTCHA's
v2 test secret), then by how the token starts:

    pass...      success, for `hostname` (the service's, by default), with `action`, score 0.9
    fail...      not solved
    elsewhere... solved on another site (hostname evil.example)
    lowscore...  solved, score 0.1 (reCAPTCHA v3)
    slow...      answers after `slow_seconds`
    garbage...   answers 200 with something that is not JSON

With `down` set, every call answers 503. The script at /api.js turns each widget element into a
button that, once pressed, puts a `pass-...` token in the provider's hidden form field.
"""

from __future__ import annotations

import json
import secrets
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

import pytest

from tests.support.http import serving_thread

TURNSTILE_PASS_SECRET = "1x0000000000000000000000000000000AA"  # noqa: S105 (documented test key)
TURNSTILE_FAIL_SECRET = "2x0000000000000000000000000000000AA"  # noqa: S105
TURNSTILE_SPENT_SECRET = "3x0000000000000000000000000000000AA"  # noqa: S105
TURNSTILE_PASS_SITE_KEY = "1x00000000000000000000AA"
TURNSTILE_DUMMY_TOKEN = "XXXX.DUMMY.TOKEN.XXXX"  # noqa: S105
HCAPTCHA_SECRET = "0x0000000000000000000000000000000000000000"  # noqa: S105
HCAPTCHA_SITE_KEY = "10000000-ffff-ffff-ffff-000000000001"
HCAPTCHA_TOKEN = "10000000-aaaa-bbbb-cccc-000000000001"  # noqa: S105
RECAPTCHA_V2_SECRET = "6LeIxAcTAAAAAGG-vFI1TnRWxMZNFuojJ4WifJWe"  # noqa: S105

WIDGET_SCRIPT = """
(() => {
  const fields = {"cf-turnstile": "cf-turnstile-response", "h-captcha": "h-captcha-response",
                  "g-recaptcha": "g-recaptcha-response"};
  for (const [cls, name] of Object.entries(fields)) {
    for (const element of document.querySelectorAll("." + cls)) {
      const input = document.createElement("input");
      input.type = "hidden"; input.name = name;
      const button = document.createElement("button");
      button.type = "button"; button.textContent = "I am human";
      button.addEventListener("click", () => {
        input.value = "pass-" + Math.random().toString(36).slice(2);
        button.textContent = "Solved"; button.disabled = true;
      });
      element.append(input, button);
    }
  }
})();
"""


class StandIn:
    def __init__(self) -> None:
        self.hostname = "127.0.0.1"
        self.action = ""
        self.down = False
        self.slow_seconds = 5.0  # past the service's CAPTCHA_TIMEOUT (captcha_settings)
        self.calls: list[dict[str, str]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = serving_thread(self._server, "captcha-standin")

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> StandIn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, form: dict[str, str]) -> tuple[int, Any]:
        self.calls.append(form)
        if self.down:
            return 503, {"error": "unavailable"}
        secret, token = form.get("secret", ""), form.get("response", "")
        solved = {"success": True, "hostname": self.hostname, "action": self.action,
                  "score": 0.9, "challenge_ts": "2026-01-01T00:00:00Z", "error-codes": []}
        refused = {"success": False, "error-codes": ["invalid-input-response"]}
        if secret == TURNSTILE_FAIL_SECRET:
            return 200, refused
        if secret == TURNSTILE_SPENT_SECRET:
            return 200, {"success": False, "error-codes": ["timeout-or-duplicate"]}
        if secret in (TURNSTILE_PASS_SECRET, RECAPTCHA_V2_SECRET):
            return 200, solved
        if secret == HCAPTCHA_SECRET:
            return 200, solved if token == HCAPTCHA_TOKEN else refused
        if token.startswith("slow"):
            time.sleep(self.slow_seconds)
            return 200, solved
        if token.startswith("garbage"):
            return 200, "<html>not json</html>"
        if token.startswith("elsewhere"):
            return 200, {**solved, "hostname": "evil.example"}
        if token.startswith("lowscore"):
            return 200, {**solved, "score": 0.1}
        return 200, solved if token.startswith("pass") else refused

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                form = {name: values[0] for name, values in
                        parse_qs(self.rfile.read(length).decode()).items()}
                status, body = standin.answer(form)
                text = body if isinstance(body, str) else json.dumps(body)
                self._send(status, "application/json", text)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.split("?")[0] != "/api.js":
                    self._send(404, "text/plain", "not here")
                    return
                self._send(200, "text/javascript", WIDGET_SCRIPT)

            def _send(self, status: int, mimetype: str, text: str) -> None:
                data = text.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", mimetype)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the service gave up waiting (the "slow" token)

            def log_message(self, *_args: Any) -> None:
                pass

        return Handler


def fresh_token(kind: str = "pass") -> str:
    return f"{kind}-{secrets.token_urlsafe(8)}"


def captcha_settings(standin: StandIn, mode: str = "on", **extra: Any) -> dict[str, Any]:
    """The settings of a service that checks tokens with the stand-in."""
    return {"CAPTCHA_MODE": mode, "CAPTCHA_PROVIDER": "turnstile",
            "CAPTCHA_SECRET": "stand-in-secret", "CAPTCHA_SITE_KEY": "stand-in-site-key",
            "CAPTCHA_VERIFY_URL": f"{standin.url}/siteverify",
            "CAPTCHA_SCRIPT_URL": f"{standin.url}/api.js", "CAPTCHA_TIMEOUT": 2.0, **extra}


@pytest.fixture(name="settings")
def captcha_app_settings(standin: StandIn, captcha_mode: str,
                         captcha_extra: dict[str, Any]) -> dict[str, Any]:
    """`settings` for a module that imports it: a service checking tokens with `standin`."""
    return captcha_settings(standin, captcha_mode, **captcha_extra)
