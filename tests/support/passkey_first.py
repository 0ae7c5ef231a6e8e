"""A passkey-first sign-up through the hosted pages, as a person makes it: the address, the code
mailed to it (read as tests/support/email_codes.py reads one), then the passkey the (software)
authenticator makes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import User
from tests.support.email_codes import mailed_code
from tests.support.pages import submit
from tests.support.passkeys import add_passkey, ceremony_options
from tests.support.soft_authenticator import SoftAuthenticator


def ask_code(client: Any, address: str, name: str = "Grace") -> Any:
    return submit(client, "/signup/passkey", {"email": address, "full_name": name},
                  token_from="/signup/passkey")


def enter_code(client: Any, address: str, code: str, name: str = "Grace") -> Any:
    """The code page's form (its hidden fields carry the first page's address and name)."""
    return submit(client, "/signup/passkey/code",
                  {"email": address, "full_name": name, "code": code},
                  token_from="/signup/passkey")


def sign_up_with_passkey(client: Any, mailbox: Any, authenticator: SoftAuthenticator,
                         origin: str, address: str) -> Any:
    """The whole sign-up; the passkey page's response (the recovery codes)."""
    assert ask_code(client, address).status_code == 200
    entered = enter_code(client, address, mailed_code(mailbox, address))
    assert entered.status_code == 302, entered.get_data(as_text=True)
    assert entered.headers["Location"].endswith("/signup/passkey/create")
    added = add_passkey(client, authenticator, origin, "Phone")
    assert added.status_code == 200, added.get_data(as_text=True)
    return added


ORIGIN = "http://localhost:5000"
GRACE = "grace@example.com"
NEW_PASSWORD = "a first password of Grace's own"
LATER = 601  # seconds: past STEP_UP_SECONDS, the sign-in is not recent any more



@pytest.fixture
def authenticator():
    return SoftAuthenticator()


@pytest.fixture
def grace(app, mailbox, authenticator):
    """A browser that signed Grace up with a passkey (and so is signed in)."""
    client = app.test_client()
    sign_up_with_passkey(client, mailbox, authenticator, ORIGIN, GRACE)
    return client


def account(app, address=GRACE):
    with app.app_context():
        return db.session.scalars(select(User).where(User.email == address)).one()


def proof_answer(client, authenticator, **tamper):
    asked = ceremony_options(client, "/account/passkeys/proof/options", "/account")
    assert asked.status_code == 200, asked.get_data(as_text=True)
    return json.dumps(authenticator.assert_(asked.get_json(), ORIGIN, **tamper))


def flashed(client):
    return client.get("/account").get_data(as_text=True)
