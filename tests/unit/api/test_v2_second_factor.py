"""A second factor through the JSON API: v2's mfa_token and POST /api/v2/auth/mfa, v1's
`mfa_required` problem, and the attacks on them (codes from pyotp at the fake clock)."""

import pytest

from app.domain.factors import codes
from tests.support import races
from tests.support.http import bearer
from tests.support.second_factors import code_at, enrolled_user


@pytest.fixture
def enrolled(app, make_user, clock):
    return enrolled_user(app, make_user, clock)


def password_login(client, account):
    return client.post("/api/v2/auth/login",
                       json={"email": account.email, "password": account.password})


def complete(client, token, code):
    return client.post("/api/v2/auth/mfa", json={"mfa_token": token, "code": code})


def test_v2_login_answers_a_second_step_instead_of_tokens(client, enrolled):
    account, _secret, _codes = enrolled
    response = password_login(client, account)
    body = response.get_json()
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    assert body["mfa_required"] is True and body["methods"] == ["totp", "recovery_code"]
    assert set(body) == {"mfa_required", "mfa_token", "methods", "expires_in"}
    assert len(body["mfa_token"]) >= 43


def test_the_mfa_token_with_a_code_gives_tokens_once(client, enrolled, clock):
    account, secret, _codes = enrolled
    token = password_login(client, account).get_json()["mfa_token"]
    done = complete(client, token, code_at(secret, clock))
    assert done.status_code == 200, done.get_json()
    tokens = done.get_json()
    assert client.get("/api/v2/auth/verify",
                      headers=bearer(tokens["access_token"])).status_code == 200
    clock.advance(30)
    again = complete(client, token, code_at(secret, clock))
    assert again.status_code == 401 and again.get_json()["code"] == "invalid_mfa_token"


def test_a_reset_ends_the_sign_ins_waiting_for_their_second_factor(client, enrolled, clock,
                                                                    mailbox):
    """Whoever took an mfa_token with the old password cannot finish it after the owner reset."""
    account, secret, _codes = enrolled
    token = password_login(client, account).get_json()["mfa_token"]
    client.post("/api/v2/auth/forgot-password", json={"email": account.email})
    reset = mailbox.last_link(account.email, "/reset-password").split("token=")[1]
    assert client.post("/api/v2/auth/reset-password", json={
        "token": reset, "new_password": "a brand new passphrase"}).status_code == 200
    late = complete(client, token, code_at(secret, clock))
    assert late.status_code == 401 and late.get_json()["code"] == "invalid_mfa_token"


def test_a_replayed_totp_code_is_refused(client, enrolled, clock):
    account, secret, _codes = enrolled
    code = code_at(secret, clock)
    assert complete(client, password_login(client, account).get_json()["mfa_token"], code
                    ).status_code == 200
    replay = complete(client, password_login(client, account).get_json()["mfa_token"], code)
    assert replay.status_code == 401 and replay.get_json()["code"] == "invalid_second_factor"


def test_a_recovery_code_works_once(client, enrolled):
    account, _secret, codes = enrolled
    assert complete(client, password_login(client, account).get_json()["mfa_token"], codes[3]
                    ).status_code == 200
    assert complete(client, password_login(client, account).get_json()["mfa_token"], codes[3]
                    ).status_code == 401


def test_an_expired_mfa_token_is_refused(client, enrolled, clock):
    account, secret, _codes = enrolled
    token = password_login(client, account).get_json()["mfa_token"]
    clock.advance(301)
    refused = complete(client, token, code_at(secret, clock))
    assert refused.status_code == 401 and refused.get_json()["code"] == "invalid_mfa_token"


@pytest.mark.parametrize("other", ["refresh_token", "hosted", "garbage"])
def test_only_an_mfa_token_completes(app, client, enrolled, clock, login, other, make_user):
    account, secret, _codes = enrolled
    if other == "refresh_token":
        token = login(make_user("bob@example.com"))["refresh_token"]
    elif other == "hosted":  # the hosted pages' pending sign-in is for the hosted pages only
        from tests.support.pages import submit
        browser = app.test_client()
        submit(browser, "/login", {"email": account.email, "password": account.password})
        with browser.session_transaction() as cookie:
            token = cookie["svc_second_step"]["token"]
    else:
        token = "x" * 43
    refused = complete(client, token, code_at(secret, clock))
    assert refused.status_code == 401 and refused.get_json()["code"] == "invalid_mfa_token"


def test_guessing_codes_spends_the_token_and_then_limits_the_account(client, enrolled, clock):
    account, secret, _codes = enrolled
    token = password_login(client, account).get_json()["mfa_token"]
    assert [complete(client, token, f"{n:06d}").status_code for n in range(5)] == [401] * 5
    assert complete(client, token, code_at(secret, clock)).get_json()["code"] == \
        "invalid_mfa_token"
    token = password_login(client, account).get_json()["mfa_token"]
    assert [complete(client, token, f"{n:06d}").status_code for n in range(10, 15)] == [401] * 5
    token = password_login(client, account).get_json()["mfa_token"]
    limited = complete(client, token, code_at(secret, clock))
    assert limited.status_code == 429 and limited.headers["Retry-After"]


def test_v1_login_answers_mfa_required_with_where_to_sign_in(client, enrolled, app):
    account, _secret, _codes = enrolled
    response = client.post("/api/v1/auth/login", json={
        "email": account.email, "password": account.password, "captcha_token": ""})
    body = response.get_json()
    assert response.status_code == 403 and body["code"] == "mfa_required"
    assert body["login_url"] == app.config["PUBLIC_URL"] + "/login"
    assert "access_token" not in body and "session" not in body


def test_a_wrong_password_still_answers_invalid_credentials(client, enrolled):
    account, _secret, _codes = enrolled
    response = client.post("/api/v2/auth/login",
                           json={"email": account.email, "password": "not the password"})
    assert response.status_code == 401 and response.get_json()["code"] == "invalid_credentials"


def test_the_openapi_document_describes_the_second_step(client):
    doc = client.get("/api/openapi.json").get_json()
    complete_mfa = doc["paths"]["/api/v2/auth/mfa"]["post"]
    assert "invalid_mfa_token" in complete_mfa["description"]
    assert "invalid_second_factor" in complete_mfa["description"]
    assert "MfaRequired" in doc["components"]["schemas"]
    assert "mfa_required" in doc["paths"]["/api/v1/auth/login"]["post"]["description"]


def claims_of(token):
    import jwt
    return jwt.decode(token, options={"verify_signature": False})


def test_tokens_say_a_second_factor_was_used(client, enrolled, clock, make_user, login):
    account, secret, codes = enrolled
    token = password_login(client, account).get_json()["mfa_token"]
    claims = claims_of(complete(client, token, code_at(secret, clock)).get_json()["access_token"])
    assert claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == "aal2"
    token = password_login(client, account).get_json()["mfa_token"]
    refreshed = client.post("/api/v2/auth/refresh", json={
        "refresh_token": complete(client, token, codes[0]).get_json()["refresh_token"]})
    assert claims_of(refreshed.get_json()["access_token"])["acr"] == "aal2"
    # A sign-in without a second factor keeps the minimal claims.
    single = claims_of(login(make_user("bob@example.com"))["access_token"])
    assert "amr" not in single and "acr" not in single


# Bursts of wrong codes (tests/support/races.py) ---------------------------------------------------

class TestBursts:
    @pytest.fixture
    def settings(self, settings):
        return {**settings, **races.POOL}

    @pytest.mark.parametrize("wrong", ["000000", "aaaaa-bbbbb"], ids=["totp", "recovery_code"])
    def test_one_sign_in_checks_exactly_its_attempts(self, app, enrolled, monkeypatch, wrong):
        account, _secret, _codes = enrolled
        token = password_login(app.test_client(), account).get_json()["mfa_token"]
        with races.burst(monkeypatch, codes, "use_code") as burst:
            answers = burst.send(lambda _: complete(app.test_client(), token, wrong))
        assert burst.checked == 5  # MFA_PENDING_ATTEMPTS
        assert races.statuses(answers) == [401] * 16
        assert {answer.get_json()["code"] for answer in answers} == {
            "invalid_second_factor", "invalid_mfa_token"}

    def test_the_account_checks_exactly_its_limit_over_several_sign_ins(self, app, enrolled,
                                                                       monkeypatch):
        account, _secret, _codes = enrolled
        tokens = [password_login(app.test_client(), account).get_json()["mfa_token"]
                  for _ in range(4)]
        with races.burst(monkeypatch, codes, "use_code") as burst:
            answers = burst.send(lambda i: complete(app.test_client(), tokens[i % 4], "000000"))
        assert burst.checked == 10  # LIMIT_SECOND_FACTOR_FAILURES
        assert races.statuses(answers) == [401] * 10 + [429] * 6
