"""Passkey ceremonies through the test client, as static/passkeys.js runs them: a POST for the
options with the page's CSRF token, then the page's form with the authenticator's answer."""

from __future__ import annotations

import json
from typing import Any

from tests.support.pages import csrf_token, submit
from tests.support.soft_authenticator import SoftAuthenticator


def ceremony_options(client: Any, path: str, page: str) -> Any:
    """A ceremony's options (the response), asked for from `page`."""
    return client.post(path, headers={"X-CSRFToken": csrf_token(client, page)})


def add_passkey(client: Any, authenticator: SoftAuthenticator, origin: str,
                name: str = "Laptop") -> Any:
    """Add a passkey from the account page of a signed-in browser (the response)."""
    asked = ceremony_options(client, "/account/passkeys/options", "/account")
    assert asked.status_code == 200, asked.get_data(as_text=True)
    answer = authenticator.register(asked.get_json(), origin)
    return submit(client, "/account/passkeys", {"credential": json.dumps(answer), "name": name},
                  token_from="/account")
