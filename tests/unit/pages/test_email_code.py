"""Signing in with a mailed code on the hosted pages (app/pages/email_code.py): the address,
then the code; the link signs in only in the browser that asked, shows the code anywhere else,
and a GET of it changes nothing; a sign-in here goes on as a password's does (the second step,
a client site's handoff, an OpenID Connect authorization)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import jwt
import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.extensions import db
from app.models import EmailCode
from tests.support.accounts import Account
from tests.support.apps import Mailbox
from tests.support.email_codes import mailed_code, mailed_link
from tests.support.oidc import PUBLIC, SITES, authorize_query, pkce, query_of, redeem
from tests.support.pages import submit
from tests.support.second_factors import enrolled_user
from tests.support.settings import change_settings

SHOP = "https://shop.example/cb"


@pytest.fixture
def settings() -> dict[str, Any]:
    return {"CLIENT_SITES": {**SITES, "shop": {"redirect_uris": [SHOP], "origins": [],
                                               "email_code_sign_in": False}}}


def _ask(client: FlaskClient, email: str, query: str = "") -> Any:
    path = "/login/email-code" + query
    return submit(client, path, {"email": email})


def _type_code(client: FlaskClient, code: str, query: str = "") -> Any:
    return submit(client, "/login/email-code/verify" + query, {"code": code})


def _signed_in(client: FlaskClient) -> bool:
    return client.get("/account").status_code == 200


def _row(app: Flask, email: str) -> tuple[Any, ...]:
    with app.app_context():
        row = db.session.get(EmailCode, (email, "sign_in"))
        assert row is not None
        return (row.attempts, row.used_at, row.link_hash, row.expires_at)


def test_the_login_page_offers_it_unless_turned_off(app: Flask, client: FlaskClient) -> None:
    assert "/login/email-code" in client.get("/login").text
    assert "/login/email-code" not in client.get("/login?redirect_uri=" + SHOP).text
    assert client.get("/login/email-code?redirect_uri=" + SHOP).status_code == 403
    change_settings(app, EMAIL_CODE_SIGN_IN=False)
    assert "/login/email-code" not in client.get("/login").text
    assert client.get("/login/email-code").status_code == 403


def test_the_code_signs_this_browser_in(client: FlaskClient, user: Account,
                                        mailbox: Mailbox) -> None:
    asked = _ask(client, user.email)
    assert asked.status_code == 302 and asked.headers["Location"] == "/login/email-code/verify"
    page = client.get("/login/email-code/verify")
    assert user.email in page.text and 'autocomplete="one-time-code"' in page.text
    done = _type_code(client, mailed_code(mailbox, user.email))
    assert done.status_code == 302 and done.headers["Location"] == "/account"
    assert "signed in with an emailed code" in client.get("/account").text


def test_an_unknown_address_gets_the_same_pages_and_no_mail(
        client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    known, unknown = _ask(client, user.email), _ask(app_client := client, "nobody@example.com")
    assert known.status_code == unknown.status_code == 302
    assert known.headers["Location"] == unknown.headers["Location"]
    assert app_client.get("/login/email-code/verify").status_code == 200
    assert [m["To"] for m in mailbox.messages] == [user.email]


def test_a_wrong_code_is_said_on_the_form(client: FlaskClient, user: Account,
                                          mailbox: Mailbox) -> None:
    _ask(client, user.email)
    right = mailed_code(mailbox, user.email)
    wrong = _type_code(client, str((int(right) + 1) % 10**8).zfill(8))
    assert wrong.status_code == 401 and "wrong, expired or already used" in wrong.text
    assert not _signed_in(client)
    assert _type_code(client, right).status_code == 302


def test_the_link_in_the_asking_browser_asks_for_a_button(
        app: Flask, client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    _ask(client, user.email)
    link = mailed_link(mailbox, user.email)
    code = mailed_code(mailbox, user.email)
    page = client.get(link)
    assert page.status_code == 200 and 'name="token"' in page.text and code not in page.text
    assert not _signed_in(client)
    token = link.split("token=", 1)[1]
    done = submit(client, "/login/email-code/link", {"token": token}, token_from=link)
    assert done.status_code == 302 and done.headers["Location"] == "/account"
    assert _signed_in(client)
    assert client.get(link).status_code == 401  # used


def test_a_mail_scanner_that_opens_the_link_changes_nothing(
        app: Flask, client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    _ask(client, user.email)
    link = mailed_link(mailbox, user.email)
    before = _row(app, user.email)
    scanner = app.test_client()
    for opener in (scanner, scanner, client):
        assert opener.get(link).status_code == 200
        assert opener.head(link).status_code == 200
    assert _row(app, user.email) == before
    assert not _signed_in(scanner) and not _signed_in(client)
    assert _type_code(client, mailed_code(mailbox, user.email)).status_code == 302


def test_the_link_in_another_browser_shows_the_code_and_never_signs_in(
        app: Flask, client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    """The attacker asks a code for the victim's address; the victim opens the mail: the
    victim's browser only shows the code, and the attacker's button does nothing either."""
    attacker = app.test_client()
    _ask(attacker, user.email)
    link = mailed_link(mailbox, user.email)
    code = mailed_code(mailbox, user.email)
    victim = client
    page = victim.get(link)
    assert page.status_code == 200 and code in page.text and 'name="token"' not in page.text
    token = link.split("token=", 1)[1]
    refused = submit(victim, "/login/email-code/link", {"token": token}, token_from="/login")
    assert refused.status_code == 401 and not _signed_in(victim)
    # The attacker holds the link's token too, but not the victim's mail: without it, no way in.
    assert not _signed_in(attacker)
    # The code still works where it was asked for (the victim's own request, say).
    assert _type_code(attacker, code).status_code == 302


def test_an_account_with_a_second_factor_goes_to_its_second_step(
        app: Flask, client: FlaskClient, make_user: Any, mailbox: Mailbox, clock: Any) -> None:
    account, _secret, _codes = enrolled_user(app, make_user, clock)
    _ask(client, account.email)
    done = _type_code(client, mailed_code(mailbox, account.email))
    assert done.headers["Location"].startswith("/login/second-factor")
    assert not _signed_in(client)


def test_a_site_handoff_continues_after_the_code(client: FlaskClient, user: Account,
                                                 mailbox: Mailbox) -> None:
    query = "?" + urlencode({"redirect_uri": "https://notes.example/cb", "state": "s1"})
    asked = _ask(client, user.email, query)
    assert asked.headers["Location"].startswith("/login/email-code/verify?redirect_uri=")
    done = _type_code(client, mailed_code(mailbox, user.email), query)
    back = query_of(done.headers["Location"])
    assert done.headers["Location"].startswith("https://notes.example/cb?")
    assert back["state"] == "s1" and back["code"] and back["provider"] == "email_code"


def test_the_link_continues_the_site_handoff_of_the_browser_that_asked(
        client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    query = "?" + urlencode({"redirect_uri": "https://notes.example/cb", "state": "s2"})
    _ask(client, user.email, query)
    link = mailed_link(mailbox, user.email)
    done = submit(client, "/login/email-code/link", {"token": link.split("token=", 1)[1]},
                  token_from=link)
    assert done.headers["Location"].startswith("https://notes.example/cb?")
    assert query_of(done.headers["Location"])["state"] == "s2"


def test_an_openid_connect_authorization_continues_after_the_code(
        client: FlaskClient, user: Account, mailbox: Mailbox) -> None:
    verifier = pkce()
    query = authorize_query(verifier=verifier)
    to_login = client.get("/oauth2/authorize?" + urlencode(query))
    assert to_login.headers["Location"].startswith("/login")
    assert "/login/email-code" in client.get(to_login.headers["Location"]).text
    _ask(client, user.email)
    done = _type_code(client, mailed_code(mailbox, user.email))
    assert done.headers["Location"].startswith("/oauth2/authorize")
    back = client.get(done.headers["Location"])
    code = query_of(back.headers["Location"])["code"]
    tokens = redeem(client, code, verifier).get_json()
    claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
    assert claims["amr"] == ["otp"] and claims["aud"] == PUBLIC
    access = jwt.decode(tokens["access_token"], options={"verify_signature": False})
    assert access["amr"] == ["otp"]


def test_a_site_that_turned_it_off_through_openid_connect(client: FlaskClient) -> None:
    query = authorize_query(client_id="shop", redirect_uri=SHOP, verifier=pkce())
    to_login = client.get("/oauth2/authorize?" + urlencode(query))
    assert "/login/email-code" not in client.get(to_login.headers["Location"]).text
    assert client.get("/login/email-code").status_code == 403
