"""The sign-up confirmation link opens a page with a button, as every mailed link does: opening it
changes nothing, so a mail scanner that follows links confirms no address for whoever signed up
with it (issue 33, finding 22). The API's sign-up and resend answer as before."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import User
from tests.support.pages import csrf_token, open_mailed_link

pytestmark = pytest.mark.app_settings("pages")

NEW, PASSPHRASE = "new@example.com", "a long enough passphrase"


def _signed_up(client, mailbox):
    made = client.post("/api/v2/auth/signup", json={"email": NEW, "password": PASSPHRASE})
    assert made.status_code == 201
    link = mailbox.last_link(NEW, "/confirm-email")
    return made.get_json()["user"]["id"], link[link.index("/confirm-email"):]


def _verified(app, user_id):
    with app.app_context():
        return db.session.get(User, user_id).email_verified


def test_opening_the_link_confirms_nothing_the_button_does(app, client, mailbox):
    user_id, path = _signed_up(client, mailbox)
    for _ in range(3):  # a scanner, following the link
        page = app.test_client().get(path)
        assert page.status_code == 200 and "<button" in page.text
        assert "Email confirmed" not in page.text
    assert not _verified(app, user_id)
    done = open_mailed_link(app.test_client(), path)
    assert done.status_code == 200 and "Email confirmed" in done.text
    assert _verified(app, user_id)


def test_the_button_needs_the_pages_csrf_token(app, client, mailbox):
    user_id, path = _signed_up(client, mailbox)
    token = path.split("token=", 1)[1]
    forged = app.test_client().post("/confirm-email", data={"token": token})
    assert forged.status_code == 400
    assert not _verified(app, user_id)


def test_a_dead_link_says_so_on_opening(app, client, mailbox):
    _, path = _signed_up(client, mailbox)
    assert open_mailed_link(client, path).status_code == 200
    again = client.get(path)
    assert again.status_code == 400 and "does not work" in again.text
    assert 'name="token"' not in again.text  # no button that would use it
    browser = app.test_client()
    pressed = browser.post("/confirm-email", data={
        "token": path.split("token=", 1)[1], "csrf_token": csrf_token(browser, "/login")})
    assert pressed.status_code == 400


class TestRequired:
    @pytest.fixture
    def settings(self):
        return {"REQUIRE_EMAIL_CONFIRMATION": True}

    def test_a_scanned_link_signs_no_one_in(self, app, client, mailbox):
        made = client.post("/api/v2/auth/signup", json={"email": NEW, "password": PASSPHRASE})
        assert made.status_code == 201 and made.get_json()["confirmation_required"] is True
        link = mailbox.last_link(NEW, "/confirm-email")
        assert app.test_client().get(link[link.index("/confirm-email"):]).status_code == 200
        login = client.post("/api/v2/auth/login", json={"email": NEW, "password": PASSPHRASE})
        assert login.status_code == 403 and login.get_json()["code"] == "email_not_confirmed"
        assert open_mailed_link(app.test_client(), link).status_code == 200
        login = client.post("/api/v2/auth/login", json={"email": NEW, "password": PASSPHRASE})
        assert login.status_code == 200
