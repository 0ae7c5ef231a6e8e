"""The sign-up limit counts what costs the service (an account made, a mail sent) and the answers
that tell whether an address has an account (409), not forms refused for an error their sender
can correct (issue 33, finding 13): an office behind one address is not held up by typos."""

from __future__ import annotations

import pytest

from tests.support.pages import submit

PASSPHRASE = "a long enough passphrase"


@pytest.fixture
def settings():
    return {"RATELIMIT_ENABLED": True, "LIMIT_SIGNUP": "2 per hour"}


def _v2(client, email, password=PASSPHRASE):
    return client.post("/api/v2/auth/signup", json={"email": email, "password": password})


def test_api_sign_ups_refused_for_their_errors_do_not_count(client):
    typos = [_v2(client, "not an address").status_code,
             _v2(client, "short@example.com", "short").status_code,
             _v2(client, "common@example.com", "password12345678").status_code]
    assert typos == [422, 422, 422]
    made = [_v2(client, f"new{i}@example.com").status_code for i in range(3)]
    assert made == [201, 201, 429]


def test_hosted_sign_ups_refused_for_their_errors_do_not_count(client):
    for _ in range(4):
        refused = submit(client, "/signup", {"email": "new@example.com", "password": "short"})
        assert refused.status_code == 422
    made = [submit(client, "/signup", {"email": f"new{i}@example.com",
                                       "password": PASSPHRASE}).status_code for i in range(3)]
    assert made[:2] != [429, 429] and made[2] == 429


def test_a_taken_address_still_counts_the_oracle_stays_slow(client, make_user):
    make_user("taken@example.com")
    answers = [_v2(client, "taken@example.com").status_code for _ in range(3)]
    assert answers == [409, 409, 429]


def test_the_limit_is_per_address_and_shared_by_the_api_and_the_pages(client):
    assert _v2(client, "one@example.com").status_code == 201
    assert submit(client, "/signup", {"email": "two@example.com",
                                      "password": PASSPHRASE}).status_code < 400
    assert _v2(client, "three@example.com").status_code == 429
    other = client.post("/api/v2/auth/signup", json={"email": "four@example.com",
                                                     "password": PASSPHRASE},
                        environ_base={"REMOTE_ADDR": "10.9.9.9"})
    assert other.status_code == 201
