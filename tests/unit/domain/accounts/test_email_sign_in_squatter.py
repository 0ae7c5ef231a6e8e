"""Someone signs up with another person's address before they do, and waits: the first code the
address's holder signs in with (app/domain/accounts/email_sign_in.py) removes the password the
squatter set and ends every session the squatter holds, through each door a code comes by (the
v2 API, the hosted page's code and its link), and tells the holder by mail. A password someone
proved to be the holder's, or one set on an address already proved, stays."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent, AuthSession, User
from tests.support.accounts import PASSWORD
from tests.support.apps import Mailbox
from tests.support.email_codes import ask, mailed_code, mailed_link, verify
from tests.support.pages import submit

OWNER = "owner@example.com"
OWNERS_PASSWORD = "a first password of the owner's own"  # noqa: S105 (a test's password)


@pytest.fixture
def squatter(client: FlaskClient) -> dict[str, Any]:
    """Signed up through v2 with the owner's address, and signed in: the tokens it holds."""
    answer = client.post("/api/v2/auth/signup",
                         json={"email": OWNER, "password": PASSWORD, "full_name": "Mallory"})
    assert answer.status_code == 201, answer.get_json()
    signed_in = client.post("/api/v2/auth/login", json={"email": OWNER, "password": PASSWORD})
    assert signed_in.status_code == 200, signed_in.get_json()
    body: dict[str, Any] = signed_in.get_json()
    return body


def _account_at(app: Flask) -> User:
    with app.app_context():
        found = db.session.scalars(select(User).where(User.email == OWNER)).one()
        db.session.expunge(found)
        return found


def _squatter_is_out(app: Flask, client: FlaskClient, tokens: dict[str, Any]) -> None:
    for path in ("/api/v2/auth/login", "/api/v1/auth/login"):
        again = client.post(path, json={"email": OWNER, "password": PASSWORD})
        assert again.status_code == 401, (path, again.get_json())
    refreshed = client.post("/api/v2/auth/refresh", json={"refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 401
    verified = client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert verified.status_code == 401
    owner = _account_at(app)
    assert owner.password_hash is None and owner.email_verified
    with app.app_context():
        events = [row.event for row in db.session.scalars(
            select(AuditEvent).where(AuditEvent.user_id == owner.id))]
        assert events.count("unproved_password_removed") == 1


def _told_by_mail(mailbox: Mailbox) -> None:
    subjects = [message["Subject"] for message in mailbox.to(OWNER)]
    assert "The password of your account was removed" in subjects
    [told] = [m for m in mailbox.to(OWNER) if m["Subject"].startswith("The password")]
    assert "/account" in told.get_body(("plain",)).get_content()


def test_a_code_through_the_api_takes_the_account_back(
        app: Flask, client: FlaskClient, squatter: dict[str, Any], mailbox: Mailbox) -> None:
    assert ask(client, OWNER).status_code == 202
    owners = verify(client, OWNER, mailed_code(mailbox, OWNER))
    assert owners.status_code == 200, owners.get_json()
    _squatter_is_out(app, client, squatter)
    owners_check = client.get("/api/v2/auth/verify", headers={
        "Authorization": f"Bearer {owners.get_json()['access_token']}"})
    assert owners_check.status_code == 200  # the sign-in's own session lives
    with app.app_context():
        live = db.session.scalars(select(AuthSession).where(
            AuthSession.user_id == _account_at(app).id, AuthSession.revoked_at.is_(None))).all()
        assert len(live) == 1
    _told_by_mail(mailbox)


def test_a_code_on_the_hosted_page_takes_the_account_back_and_a_password_can_be_added(
        app: Flask, client: FlaskClient, squatter: dict[str, Any], mailbox: Mailbox) -> None:
    squatters_browser = app.test_client()
    signed_in = submit(squatters_browser, "/login", {"email": OWNER, "password": PASSWORD})
    assert signed_in.status_code == 302
    assert squatters_browser.get("/account").status_code == 200

    owners_browser = app.test_client()
    submit(owners_browser, "/login/email-code", {"email": OWNER})
    done = submit(owners_browser, "/login/email-code/verify",
                  {"code": mailed_code(mailbox, OWNER)})
    assert done.status_code == 302 and done.headers["Location"] == "/account"

    assert squatters_browser.get("/account").status_code == 302  # signed out
    _squatter_is_out(app, client, squatter)
    _told_by_mail(mailbox)
    page = owners_browser.get("/account").text
    assert "Add a password" in page
    added = submit(owners_browser, "/account/password/set", {"new_password": OWNERS_PASSWORD},
                   token_from="/account")
    assert added.status_code == 302
    assert _account_at(app).password_is_the_holders
    assert client.post("/api/v2/auth/login", json={
        "email": OWNER, "password": OWNERS_PASSWORD}).status_code == 200


def test_the_mailed_link_takes_the_account_back(
        app: Flask, client: FlaskClient, squatter: dict[str, Any], mailbox: Mailbox) -> None:
    owners_browser = app.test_client()
    submit(owners_browser, "/login/email-code", {"email": OWNER})
    link = mailed_link(mailbox, OWNER)
    done = submit(owners_browser, "/login/email-code/link",
                  {"token": link.split("token=", 1)[1]}, token_from=link)
    assert done.status_code == 302 and done.headers["Location"] == "/account"
    _squatter_is_out(app, client, squatter)


def test_a_wrong_code_removes_nothing(
        app: Flask, client: FlaskClient, squatter: dict[str, Any], mailbox: Mailbox) -> None:
    ask(client, OWNER)
    code = mailed_code(mailbox, OWNER)
    assert verify(client, OWNER, "12345678" if code != "12345678" else "87654321"
                  ).status_code == 401
    owner = _account_at(app)
    assert owner.password_hash is not None and not owner.email_verified
    assert client.post("/api/v2/auth/refresh", json={
        "refresh_token": squatter["refresh_token"]}).status_code == 200


def test_a_password_on_a_proved_address_stays(app: Flask, client: FlaskClient, make_user: Any,
                                              mailbox: Mailbox, login: Any) -> None:
    """Confirmed before the code (by its holder, or a link opened elsewhere): the code is a
    sign-in like any other, and the account's other sessions stay."""
    account = make_user(OWNER, email_verified=True)
    other = login(account)
    ask(client, OWNER)
    assert verify(client, OWNER, mailed_code(mailbox, OWNER)).status_code == 200
    assert _account_at(app).password_hash is not None
    assert login(account)["access_token"]
    assert client.post("/api/v2/auth/refresh", json={
        "refresh_token": other["refresh_token"]}).status_code == 200
    assert all(not m["Subject"].startswith("The password") for m in mailbox.to(OWNER))
