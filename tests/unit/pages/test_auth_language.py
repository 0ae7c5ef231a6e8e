"""The hosted sign-up (app/pages/auth.py) saves the language of its page on the account, so the
first mail (the confirmation) is already in it: the page's language by Accept-Language, by the
picker's cookie, or by the `ui_locales` of the OpenID Connect authorization that waits."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import User
from tests.support.accounts import PASSWORD, saved_language
from tests.support.oidc import SITES, authorize_query, pkce
from tests.support.pages import csrf_token

GERMAN_CONFIRMATION = "Bestätigen Sie Ihre E-Mail-Adresse"


@pytest.fixture
def settings():
    return {"CLIENT_SITES": SITES}


def _page_sign_up(client, email: str, path: str = "/signup", **headers: str):
    token = csrf_token(client, path)
    return client.post(path, data={"csrf_token": token, "email": email, "password": PASSWORD,
                                   "full_name": "Ada"}, headers=headers)


def test_a_sign_up_on_a_german_page_saves_german_and_its_first_mail_is_german(
        app, client, mailbox):
    client.environ_base["HTTP_ACCEPT_LANGUAGE"] = "de-CH,en;q=0.5"
    signed_up = _page_sign_up(client, "anna@example.com")
    assert signed_up.status_code in (201, 302, 303), signed_up.text
    assert saved_language(app, "anna@example.com") == "de"
    [first] = mailbox.to("anna@example.com")
    assert first["Subject"] == GERMAN_CONFIRMATION
    body = first.get_body(("plain",)).get_content()
    assert "Bestätigen" in body and "Confirm" not in body


def test_the_pickers_language_is_the_one_saved(app, client, mailbox):
    client.set_cookie("svc_lang", "es")
    _page_sign_up(client, "eva@example.com", HTTP_ACCEPT_LANGUAGE="de")
    assert saved_language(app, "eva@example.com") == "es"
    [first] = mailbox.to("eva@example.com")
    assert first["Subject"] == "Confirma tu dirección de correo electrónico"


def test_a_sign_up_through_an_authorization_saves_its_ui_locales(app, client, mailbox):
    started = client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), ui_locales="ja de"))
    assert started.status_code == 302
    signed_up = _page_sign_up(client, "jo@example.com", HTTP_ACCEPT_LANGUAGE="fr")
    assert signed_up.status_code in (201, 302, 303), signed_up.text
    assert saved_language(app, "jo@example.com") == "de"
    [first] = mailbox.to("jo@example.com")
    assert first["Subject"] == GERMAN_CONFIRMATION


def test_a_refused_sign_up_saves_nothing(app, client, mailbox):
    refused = _page_sign_up(client, "not an address", HTTP_ACCEPT_LANGUAGE="de")
    assert refused.status_code == 422
    with app.app_context():
        assert db.session.scalar(db.select(db.func.count()).select_from(User)) == 0
    assert mailbox.messages == []
