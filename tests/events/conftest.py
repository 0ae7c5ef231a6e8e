"""Events to client sites (issue 24): a receiver on 127.0.0.1 for each test, and sites whose
endpoints are its paths."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import pytest

from tests.events.receiver import Receiver

SECRET = "whsec_" + base64.b64encode(b"k" * 32).decode()
OUTSIDER_SECRET = "whsec_" + base64.b64encode(b"o" * 32).decode()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def settings(receiver: Receiver) -> dict[str, object]:
    return {
        "WEBHOOK_RETRY_DELAY": 0.05, "MAIL_POLL_SECONDS": 0.1,
        "CLIENT_SITES": {
            "symbols": {"redirect_uris": ["http://127.0.0.1:8001/auth/callback"],
                        "webhook_url": f"{receiver.url}/symbols", "webhook_secret": SECRET},
            "outsider": {"redirect_uris": ["https://outsider.example/cb"], "first_party": False,
                         "webhook_url": f"{receiver.url}/outsider",
                         "webhook_secret": OUTSIDER_SECRET},
        },
    }
