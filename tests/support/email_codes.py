"""Reading the sign-in codes and links the outbox mailed (app/domain/accounts/email_sign_in.py)."""

from __future__ import annotations

import re
from typing import Any

from tests.support.apps import Mailbox

LINK_PATH = "/login/email-code/link"


def mailed_code(mailbox: Mailbox, address: str) -> str:
    """The code of the last sign-in code mail to `address`."""
    for message in reversed(mailbox.to(address)):
        found = re.search(r"^\s+(\d{8})\s*$", message.get_body(("plain",)).get_content(), re.M)
        if found:
            return found.group(1)
    raise AssertionError(f"no sign-in code was mailed to {address}")


def mailed_link(mailbox: Mailbox, address: str) -> str:
    """The path and query of the last sign-in link mailed to `address`."""
    link = mailbox.last_link(address, LINK_PATH)
    return link[link.index(LINK_PATH):]


def ask(client: Any, email: str, **body: Any) -> Any:
    return client.post("/api/v2/auth/email-code", json={"email": email, **body})


def verify(client: Any, email: str, code: str) -> Any:
    return client.post("/api/v2/auth/email-code/verify", json={"email": email, "code": code})
