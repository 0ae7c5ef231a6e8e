"""Mails to an address that is not the account's yet (an address change's link, or its refusal
to a taken address) are limited per recipient, whoever asks (issue 33, finding 4): twenty
requests must not mail one stranger twenty times. Only mails sent count."""

from __future__ import annotations

import pytest

from tests.support.pages import submit

STRANGER = "stranger@example.com"


@pytest.fixture
def settings():
    return {"RATELIMIT_ENABLED": True, "LIMIT_FORGOT": "3 per hour",
            "LIMIT_LOGIN": "1000 per minute", "LIMIT_LOGIN_IP": "1000 per minute"}


def _tokens(client, account):
    return client.post("/api/v2/auth/login", json={"email": account.email,
                                                   "password": account.password}).get_json()


def _ask(client, tokens, password, to=STRANGER):
    return client.post("/api/v2/auth/email", json={"new_email": to, "password": password},
                       headers={"Authorization": f"Bearer {tokens['access_token']}"})


def test_one_recipient_gets_at_most_the_limit_whoever_asks(app, client, make_user, mailbox,
                                                           clock):
    ada, bob = make_user("ada@example.com"), make_user("bob@example.com")
    ada_tokens, bob_tokens = _tokens(client, ada), _tokens(client, bob)
    answers = [_ask(client, ada_tokens, ada.password).status_code for _ in range(2)]
    answers += [_ask(client, bob_tokens, bob.password).status_code for _ in range(3)]
    assert answers == [202, 202, 202, 429, 429]
    refused = _ask(client, bob_tokens, bob.password)
    assert 0 < int(refused.headers["Retry-After"]) <= 3600
    assert refused.get_json()["code"] == "rate_limited"
    assert len(mailbox.to(STRANGER)) == 3
    assert _ask(client, ada_tokens, ada.password, to="other@example.com").status_code == 202
    clock.advance(3601)
    assert _ask(client, ada_tokens, ada.password).status_code == 202


def test_the_refusal_to_a_taken_address_counts_the_same(app, client, make_user, mailbox):
    make_user(STRANGER)
    ada = make_user("ada@example.com")
    tokens = _tokens(client, ada)
    answers = [_ask(client, tokens, ada.password).status_code for _ in range(4)]
    assert answers == [202, 202, 202, 429]
    assert len(mailbox.to(STRANGER)) == 3


def test_wrong_passwords_send_nothing_and_count_nothing(app, client, make_user, mailbox):
    ada = make_user("ada@example.com")
    tokens = _tokens(client, ada)
    assert [_ask(client, tokens, "not the password").status_code for _ in range(3)] == [401] * 3
    assert [_ask(client, tokens, ada.password).status_code for _ in range(3)] == [202] * 3


def test_the_account_page_is_limited_the_same(app, make_user, mailbox):
    ada = make_user("ada@example.com")
    browser = app.test_client()
    submit(browser, "/login", {"email": ada.email, "password": ada.password})
    for _ in range(5):
        submit(browser, "/account/email", {"new_email": STRANGER, "password": ada.password},
               token_from="/account")
    assert len(mailbox.to(STRANGER)) == 3
    assert "Too many attempts" in browser.get("/account").text
