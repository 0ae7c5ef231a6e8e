"""Sign-in asks for a captcha only after recent failures, for an email or an address, the same
for known and unknown emails; never on refresh, code exchange or reset (issue 17, item 2)."""

from __future__ import annotations

import pytest

from app.infra.hashing import Hasher
from tests.support import races
from tests.support.accounts import PASSWORD
from tests.support.captcha import V1, V2, answers_until_asked, login
from tests.support.captcha_standin import (
    captcha_app_settings,  # noqa: F401 (its settings)
    fresh_token,
)

FAILURES = 3  # CAPTCHA_LOGIN_FAILURES: "3 per 15 minutes"


@pytest.mark.parametrize("endpoint", [V1, V2])
def test_v1_and_v2_clients_sending_an_empty_token_sign_in_until_failures(client, user,
                                                                         endpoint):
    assert login(client, user.email, PASSWORD, "", endpoint).status_code == 200
    assert login(client, user.email, PASSWORD, None, endpoint).status_code == 200


def test_known_and_unknown_emails_are_asked_after_the_same_failures(client, user):
    known = answers_until_asked(client, user.email, ip="192.0.2.1")
    unknown = answers_until_asked(client, "nobody@example.com", ip="192.0.2.2")
    assert known == unknown == FAILURES


def test_an_email_is_asked_from_every_address(client, user):
    for ip in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        assert login(client, user.email, "wrong", "", ip=ip).status_code == 401
    response = login(client, user.email, PASSWORD, "", ip="198.51.100.7")
    assert response.status_code == 422 and response.get_json()["code"] == "captcha_required"
    assert response.get_json()["captcha"]["site_key"] == "stand-in-site-key"


def test_an_address_is_asked_for_every_email(client, user):
    for n in range(FAILURES):
        assert login(client, f"guess{n}@example.com", "wrong", "").status_code == 401
    response = login(client, user.email, PASSWORD, "")
    assert response.status_code == 422


@pytest.mark.parametrize("endpoint", [V1, V2])
def test_a_solved_captcha_lets_the_right_password_in_and_clears_the_email(client, user,
                                                                          endpoint):
    for ip in ("192.0.2.1", "192.0.2.2", "192.0.2.3"):
        login(client, user.email, "wrong", "", ip=ip)
    assert login(client, user.email, PASSWORD, fresh_token(), endpoint).status_code == 200
    assert login(client, user.email, PASSWORD, "", endpoint).status_code == 200


def test_a_refused_or_replayed_token_is_captcha_invalid(client, user):
    answers_until_asked(client, user.email)
    assert login(client, user.email, PASSWORD, fresh_token("fail")).status_code == 422
    token = fresh_token()
    assert login(client, user.email, "still wrong", token).status_code == 401
    replay = login(client, user.email, PASSWORD, token)
    assert replay.status_code == 422 and replay.get_json()["code"] == "captcha_invalid"


def test_the_question_ends_with_its_window(client, clock, user):
    answers_until_asked(client, user.email)
    clock.advance(15 * 60 + 1)
    assert login(client, user.email, PASSWORD, "").status_code == 200


def test_a_provider_down_falls_back_to_the_throttles(client, standin, user):
    answers_until_asked(client, user.email)
    standin.down = True
    assert login(client, user.email, "wrong", fresh_token()).status_code == 401
    assert login(client, user.email, PASSWORD, fresh_token()).status_code == 200


@pytest.mark.parametrize("captcha_mode", ["report"])
def test_report_mode_never_refuses_a_sign_in(client, user):
    for _ in range(FAILURES + 2):
        assert login(client, user.email, "wrong", "").status_code == 401
    assert login(client, user.email, PASSWORD, fresh_token("fail")).status_code == 200


def test_never_asked_on_refresh_exchange_or_reset(client, user, mailbox):
    tokens = login(client, user.email, PASSWORD, "").get_json()
    answers_until_asked(client, user.email)
    refreshed = client.post("/api/v2/auth/refresh",
                            json={"refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 200
    v1 = client.post("/api/v1/auth/refresh", json={"refresh_token":
                                                   refreshed.get_json()["refresh_token"]})
    assert v1.status_code == 200
    exchange = client.post("/api/v2/auth/exchange-code",
                           json={"code": "unknown-code", "provider": "google"})
    assert exchange.status_code == 401 and exchange.get_json()["code"] == "invalid_code"
    reset = client.post("/api/v2/auth/reset-password",
                        json={"token": "unknown", "new_password": "another good password"})
    assert reset.get_json()["code"] == "invalid_reset_token"


@pytest.mark.parametrize("captcha_extra", [races.POOL])
def test_a_burst_without_tokens_has_exactly_the_failures_before_the_question(app, user,
                                                                             monkeypatch):
    """16 wrong passwords at once without a token (tests/support/races.py)."""
    with races.burst(monkeypatch, Hasher, "verify") as burst:
        answers = burst.send(lambda _: login(app.test_client(), user.email, "wrong", ""))
    assert burst.checked == FAILURES
    assert races.statuses(answers) == [401] * FAILURES + [422] * (16 - FAILURES)
