"""Successful answers of limited endpoints carry the IETF draft's RateLimit-Limit,
RateLimit-Remaining and RateLimit-Reset (of the limit closest to running out), so that a client
can slow down before its 429 (issue 36); unlimited endpoints carry none."""

from __future__ import annotations

import pytest

from tests.support.accounts import PASSWORD


@pytest.fixture
def settings():
    return {"RATELIMIT_ENABLED": True, "LIMIT_LOGIN": "3 per minute",
            "LIMIT_LOGIN_IP": "5 per minute", "LIMIT_REFRESH": "4 per minute"}


def _login(client, user):
    return client.post("/api/v2/auth/login", json={"email": user.email, "password": PASSWORD},
                       environ_base={"REMOTE_ADDR": "10.0.0.9"})


def test_each_successful_login_says_how_many_remain(client, user):
    seen = []
    for _ in range(3):
        answer = _login(client, user)
        assert answer.status_code == 200
        seen.append((answer.headers["RateLimit-Limit"], answer.headers["RateLimit-Remaining"]))
        assert 0 < int(answer.headers["RateLimit-Reset"]) <= 60
    assert seen == [("3", "2"), ("3", "1"), ("3", "0")]
    refused = _login(client, user)
    assert refused.status_code == 429 and "Retry-After" in refused.headers


def test_a_refresh_carries_its_own_limit(client, user, login):
    tokens = login(user)
    answer = client.post("/api/v2/auth/refresh", json={"refresh_token": tokens["refresh_token"]})
    assert answer.status_code == 200
    assert answer.headers["RateLimit-Limit"] == "4"
    assert answer.headers["RateLimit-Remaining"] == "3"


def test_an_unlimited_endpoint_carries_none(client, user, login):
    tokens = login(user)
    answer = client.get("/api/v2/auth/verify",
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert answer.status_code == 200
    assert not [name for name, _ in answer.headers.items() if name.startswith("RateLimit")]
