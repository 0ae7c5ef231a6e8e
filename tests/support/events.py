"""Events to client sites (issue 24): a receiver on 127.0.0.1 for each test, and sites whose
endpoints are its paths. A pytest plugin (tests/conftest.py): `receiver`, `example_site` and `dns`
for any test; a module marked `app_settings("events")` gets `events_settings`."""

from __future__ import annotations

import base64
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from werkzeug.serving import make_server

from tests.support.client_kit import site_module
from tests.support.http import serving_thread
from tests.support.receiver import Receiver

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
OUTSIDER_SECRET = "whsec_" + base64.b64encode(b"o" * 32).decode()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


def events_settings(receiver: Receiver) -> dict[str, Any]:
    """The sites `symbols` (first party) and `outsider`, whose webhooks go to `receiver`."""
    return {
        "WEBHOOK_RETRY_DELAY": 0.05, "OUTBOX_POLL_SECONDS": 0.1,
        "CLIENT_SITES": {
            "symbols": {"redirect_uris": ["http://127.0.0.1:8001/auth/callback"],
                        "webhook_url": f"{receiver.url}/symbols", "webhook_secret": SECRET},
            "outsider": {"redirect_uris": ["https://outsider.example/cb"], "first_party": False,
                         "webhook_url": f"{receiver.url}/outsider",
                         "webhook_secret": OUTSIDER_SECRET},
        },
    }


def example_app() -> Any:
    """examples/client_site as `symbols`, taking the webhooks signed with SECRET."""
    module = site_module()
    verifier = module.auth.TokenVerifier("http://127.0.0.1:9/jwks.json",
                                         issuer="http://127.0.0.1:9", audience="svc")
    return module.create_app("symbols", "http://127.0.0.1:9", verifier=verifier,
                             webhook_secret=SECRET)


@pytest.fixture
def example_site() -> Iterator[tuple[Any, str]]:
    """The example site on a port of its own: (its app, its URL)."""
    site = example_app()
    server = make_server("127.0.0.1", 0, site, threaded=True)
    serving_thread(server, "example-site").start()
    yield site, f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def dns(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The resolver: names the test puts here resolve to the address it gives (IPv4 or IPv6,
    by its form); other names as usual."""
    answers: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in answers:
            address = answers[host]
            if ":" in address:
                return [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, port, 0, 0))]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers
