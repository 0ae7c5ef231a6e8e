"""SVC_REQUIRE_EMAIL_CONFIRMATION holds on every way in (issue 12, item 3): no session, tokens or
handoff code for an unconfirmed account, whether it signs up, signs in with a password through
either API or the pages, refreshes a session opened before the setting, or comes back to a
client site through single sign-on.

accounts.check_name: the one rule for a person's name, whatever the door (the account page,
the admin API, the console), as the API's schemas and the forms say it."""

import pytest

from app.domain.accounts import accounts
from app.domain.errors import InvalidBody
from tests.support.accounts import PASSWORD
from tests.support.pages import open_mailed_link, submit
from tests.support.settings import change_settings
from tests.support.sites import PAGE_SITES, SYMBOLS

NEW = "new@example.com"


@pytest.fixture
def settings():
    return {"REQUIRE_EMAIL_CONFIRMATION": True, "CLIENT_SITES": PAGE_SITES}


def api_signup(client):
    return client.post("/api/v2/auth/signup", json={"email": NEW, "password": PASSWORD})


def test_api_signup_answers_without_tokens_until_the_address_is_confirmed(client, mailbox):
    response = api_signup(client)
    assert response.status_code == 201
    body = response.get_json()
    assert body["confirmation_required"] is True
    assert body["user"]["email"] == NEW and body["user"]["email_verified"] is False
    assert "access_token" not in body and "refresh_token" not in body
    login = client.post("/api/v2/auth/login", json={"email": NEW, "password": PASSWORD})
    assert login.status_code == 403 and login.get_json()["code"] == "email_not_confirmed"
    link = mailbox.last_link(NEW, "/confirm-email")
    assert open_mailed_link(client, link).status_code == 200
    login = client.post("/api/v2/auth/login", json={"email": NEW, "password": PASSWORD})
    assert login.status_code == 200


def test_v1_login_is_refused_too(client, user):
    response = client.post("/api/v1/auth/login",
                           json={"email": user.email, "password": PASSWORD, "captcha_token": ""})
    assert response.status_code == 403 and response.get_json()["code"] == "email_not_confirmed"


def test_a_session_opened_before_the_setting_cannot_be_refreshed(app, client, user):
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=False)
    tokens = client.post("/api/v2/auth/login",
                         json={"email": user.email, "password": PASSWORD}).get_json()
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    for path in ("/api/v2/auth/refresh", "/api/v1/auth/refresh"):
        response = client.post(path, json={"refresh_token": tokens["refresh_token"]})
        assert response.status_code == 403 and response.get_json()["code"] == \
            "email_not_confirmed"


def test_hosted_signup_does_not_sign_the_browser_in(client, mailbox):
    response = submit(client, "/signup", {"email": NEW, "password": PASSWORD})
    assert response.status_code == 201 and "Confirm your email" in response.text
    assert NEW in response.text
    assert client.get("/account").status_code == 302  # to the login page: not signed in


def test_hosted_login_explains_and_opens_no_session(client, user):
    response = submit(client, "/login", {"email": user.email, "password": PASSWORD})
    assert response.status_code == 403 and "Confirm your email address" in response.text
    assert client.get("/account").status_code == 302


def test_single_sign_on_of_a_browser_signed_in_before_the_setting_gets_no_code(app, client,
                                                                             user):
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=False)
    assert submit(client, "/login", {"email": user.email, "password": PASSWORD}).status_code \
        == 302
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    response = client.get("/login", query_string={"redirect_uri": SYMBOLS})
    assert response.status_code == 403
    assert "Location" not in response.headers


def test_a_handoff_code_issued_before_the_setting_is_not_redeemed(app, client, user):
    """The code was issued while the setting was off; redeeming it opens a session, which the
    setting now forbids."""
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=False)
    submit(client, "/login", {"email": user.email, "password": PASSWORD})
    location = client.get("/login", query_string={"redirect_uri": SYMBOLS}).headers["Location"]
    code = location.split("code=")[1].split("&")[0]
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    response = client.post("/api/v2/auth/exchange-code",
                           json={"code": code, "provider": "password"})
    assert response.status_code == 403 and response.get_json()["code"] == "email_not_confirmed"


@pytest.mark.parametrize("name", ["x" * 201, "Ada\x00", "Ada\u2066", "Ada\r\nB", "\x9bAda"])
def test_a_name_out_of_the_rule_points_at_full_name(name):
    with pytest.raises(InvalidBody) as refused:
        accounts.check_name(name)
    assert refused.value.errors[0]["pointer"] == "#/full_name"


def test_a_name_is_kept_trimmed():
    assert accounts.check_name("  Ada  Lovelace ") == "Ada  Lovelace"
    assert accounts.check_name("x" * 200) == "x" * 200
    assert accounts.check_name("Zoë Ñandú 李") == "Zoë Ñandú 李"
