"""POST /api/v2/auth/exchange-code: single use, 60 s, bound to provider, PKCE and redirect URI."""

import base64
import hashlib

import pytest

from app.domain.sessions import handoff
from app.extensions import db
from app.models import User
from tests.support.http import bearer
from tests.support.sites import SYMBOLS_CALLBACK

pytestmark = pytest.mark.app_settings("oauth")

VERIFIER = "v" * 20 + "-._~" + "A1" * 10  # 44 unreserved characters
DIGEST = hashlib.sha256(VERIFIER.encode()).digest()
CHALLENGE = base64.urlsafe_b64encode(DIGEST).rstrip(b"=").decode()


@pytest.fixture
def issue_code(app, user):
    def issue(provider="github", challenge=CHALLENGE, redirect_uri=SYMBOLS_CALLBACK):
        with app.app_context():
            return handoff.issue_code(db.session.get(User, user.id), provider,
                                      handoff.HandTo(redirect_uri, challenge))
    return issue


def exchange(client, code, provider="github", verifier=VERIFIER, **extra):
    body = {"code": code, "provider": provider, **extra}
    if verifier is not None:
        body["code_verifier"] = verifier
    return client.post("/api/v2/auth/exchange-code", json=body)


def test_a_code_exchanges_for_the_login_response(client, user, issue_code):
    response = exchange(client, issue_code())
    assert response.status_code == 200
    body = response.get_json()
    assert body["user"]["id"] == user.id and body["token_type"] == "bearer"
    assert response.headers["Cache-Control"] == "no-store"
    verify = client.get("/api/v2/auth/verify", headers=bearer(body["access_token"]))
    assert verify.status_code == 200


def test_a_second_redemption_fails_and_revokes_the_first_session(client, issue_code):
    code = issue_code()
    first = exchange(client, code).get_json()
    second = exchange(client, code)
    assert second.status_code == 401 and second.get_json()["code"] == "invalid_code"
    assert client.get("/api/v2/auth/verify",
                      headers=bearer(first["access_token"])).status_code == 401
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": first["refresh_token"]}).status_code == 401


@pytest.mark.parametrize(("change", "value"), [
    ("provider", "google"), ("provider", "password"), ("provider", "facebook"),
    ("verifier", "w" * 44), ("verifier", None), ("verifier", "short"),
    ("redirect_uri", "https://evil.example/auth/callback"),
])
def test_a_mismatch_fails_with_invalid_code_and_burns_the_code(client, issue_code, change, value):
    code = issue_code()
    kwargs = {"provider": value} if change == "provider" else (
        {"verifier": value} if change == "verifier" else {"redirect_uri": value})
    response = exchange(client, code, **kwargs)
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_code"
    assert exchange(client, code).status_code == 401  # the right values no longer help


def test_the_redirect_uri_when_given_must_match(client, issue_code):
    assert exchange(client, issue_code(), redirect_uri=SYMBOLS_CALLBACK).status_code == 200


def test_a_code_without_a_challenge_needs_no_verifier_and_refuses_one(client, issue_code):
    assert exchange(client, issue_code(challenge=None), verifier=None).status_code == 200
    assert exchange(client, issue_code(challenge=None)).status_code == 401


def test_a_code_expires_after_60_seconds(client, issue_code, clock):
    code = issue_code()
    clock.advance(61)
    assert exchange(client, code).status_code == 401


def test_an_unknown_code_is_401(client):
    assert exchange(client, "x" * 43).get_json()["code"] == "invalid_code"


def test_a_disabled_account_cannot_redeem(app, client, user, issue_code):
    code = issue_code()
    app.test_cli_runner().invoke(args=["users", "disable", user.email])
    assert exchange(client, code).status_code == 401


def test_codes_are_stored_hashed(app, issue_code):
    from sqlalchemy import select

    from app.models import HandoffCode

    code = issue_code()
    with app.app_context():
        stored = db.session.scalars(select(HandoffCode.code_hash)).all()
    assert code not in stored and len(code) >= 43


class TestRateLimit:
    @pytest.fixture
    def settings(self):
        return {"RATELIMIT_ENABLED": True, "LIMIT_EXCHANGE": "3 per minute"}

    def test_exchange_is_limited_per_address(self, client):
        statuses = [exchange(client, "x" * 43).status_code for _ in range(4)]
        assert statuses == [401, 401, 401, 429]
