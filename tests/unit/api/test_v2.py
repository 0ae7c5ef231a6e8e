"""POST /api/v2/auth/signup saves the language the request's Accept-Language names (RFC 4647
lookup), when it names one of ours: the first mail is in it. Without one, nothing is saved and
the mails are in English, as before."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import User
from tests.support.accounts import PASSWORD


def _sign_up(client, email: str, **headers: str):
    return client.post("/api/v2/auth/signup", json={"email": email, "password": PASSWORD},
                       headers=headers)


def _saved_language(app, email: str) -> str | None:
    with app.app_context():
        return db.session.scalar(db.select(User.language).where(User.email == email))


def test_an_api_sign_up_in_german_gets_its_first_mail_in_german(app, client, mailbox):
    assert _sign_up(client, "anna@example.com",
                    **{"Accept-Language": "de-AT,en;q=0.5"}).status_code == 201
    assert _saved_language(app, "anna@example.com") == "de"
    [first] = mailbox.to("anna@example.com")
    assert first["Subject"] == "Bestätigen Sie Ihre E-Mail-Adresse"


@pytest.mark.parametrize("header", [None, "ja", "*", "de;q=2", "x" * 5000])
def test_without_a_language_of_ours_nothing_is_saved(app, client, mailbox, header):
    headers = {"Accept-Language": header} if header is not None else {}
    assert _sign_up(client, "eve@example.com", **headers).status_code == 201
    assert _saved_language(app, "eve@example.com") is None
    [first] = mailbox.to("eve@example.com")
    assert first["Subject"] == "Confirm your email address"
