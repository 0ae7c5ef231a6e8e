"""Ten browsers (or one attacker) redeem the same handoff code at once on the real server."""

from __future__ import annotations

import base64
import hashlib
import uuid

import pytest
import requests

from app import create_app
from app.domain.accounts import accounts
from app.domain.clients import registration, sites
from app.domain.sessions import handoff
from app.extensions import db
from tests.support.api import all_at_once, signup
from tests.support.http import TIMEOUT
from tests.support.sqlite_server import Server

pytestmark = pytest.mark.e2e

VERIFIER = "e2e-verifier-" + "z" * 40
CHALLENGE = base64.urlsafe_b64encode(hashlib.sha256(VERIFIER.encode()).digest()).rstrip(b"=")


def issue_code_in(server: Server, email: str) -> str:
    """Issue a code straight into the server's database, as the provider callback would, for a
    site registered there (a code's site must use the handoff when it is redeemed)."""
    app = create_app({"INSTANCE_PATH": str(server.instance_path), "SECRET_KEY": "e2e",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{server.database}"})
    with app.app_context():
        if sites.registered_site("symbols") is None:
            registration.add_site("symbols", ["https://symbols.example/cb"], [])
        user = accounts.find_by_email(email)
        assert user is not None
        code = handoff.issue_code(user, "github", handoff.HandTo("https://symbols.example/cb",
                                                                  CHALLENGE.decode()))
        db.session.remove()
        db.engine.dispose()
    return code


def test_ten_concurrent_redemptions_of_one_code_give_exactly_one_session(server: Server) -> None:
    email = f"race-{uuid.uuid4().hex[:8]}@example.com"
    signup(server, email)
    code = issue_code_in(server, email)

    def redeem(_index: int) -> requests.Response:
        return requests.post(server.url("/api/v2/auth/exchange-code"), timeout=TIMEOUT, json={
            "code": code, "provider": "github", "code_verifier": VERIFIER})

    responses = all_at_once(10, redeem)
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [401] * 9, statuses
    assert all(r.json()["code"] == "invalid_code" for r in responses if r.status_code == 401)
