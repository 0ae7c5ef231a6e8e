"""A first password for a passkey-first account (lifecycle/first_password.py): set right after
the sign-up or later with the passkey as the proof, or by a reset link; never over a password."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import Passkey
from tests.support.pages import submit
from tests.support.passkey_first import (
    GRACE,
    LATER,
    NEW_PASSWORD,
    ORIGIN,
    account,
    flashed,
    proof_answer,
)


@pytest.fixture
def settings(settings):
    return {**settings, "PUBLIC_URL": ORIGIN}


# A first password -------------------------------------------------------------------------------

def test_a_first_password_is_set_right_after_the_sign_up(app, grace, mailbox):
    page = flashed(grace)
    assert "Add a password" in page and "Change your password" not in page
    set_ = submit(grace, "/account/password/set", {"new_password": NEW_PASSWORD},
                  token_from="/account")
    assert set_.status_code == 302
    assert "Password set." in flashed(grace)
    assert account(app).password_hash is not None and account(app).password_is_the_holders
    by_api = app.test_client().post("/api/v2/auth/login", json={
        "email": GRACE, "password": NEW_PASSWORD})
    assert by_api.status_code == 200 and by_api.get_json()["mfa_required"] is True
    assert any("password" in m["Subject"].lower() for m in mailbox.to(GRACE))
    assert grace.get("/account").status_code == 200  # this session stays


def test_a_first_password_later_needs_the_passkey(app, grace, authenticator, clock):
    clock.advance(LATER)
    refused = submit(grace, "/account/password/set", {"new_password": NEW_PASSWORD},
                     token_from="/account")
    assert refused.status_code == 302 and account(app).password_hash is None
    set_ = submit(grace, "/account/password/set",
                  {"new_password": NEW_PASSWORD, "credential": proof_answer(grace, authenticator)},
                  token_from="/account")
    assert set_.status_code == 302 and account(app).password_hash is not None


def test_the_passkey_signs_in_with_the_new_password_as_its_second_step(app, grace):
    submit(grace, "/account/password/set", {"new_password": NEW_PASSWORD}, token_from="/account")
    signed_in = submit(app.test_client(), "/login", {"email": GRACE, "password": NEW_PASSWORD})
    assert signed_in.status_code == 302
    assert "/login/second-factor" in signed_in.headers["Location"]


def test_an_account_with_a_password_cannot_set_a_first_one(app, grace):
    submit(grace, "/account/password/set", {"new_password": NEW_PASSWORD}, token_from="/account")
    again = submit(grace, "/account/password/set", {"new_password": "another one entirely"},
                   token_from="/account")
    assert again.status_code == 302
    assert "has a password already" in flashed(grace)


def test_a_reset_link_sets_the_first_password(app, grace, mailbox, authenticator):
    """Decided: a reset for an account without a password sets its first one; as after any
    reset, its passkeys then sign in only after that password (the second step)."""
    submit(app.test_client(), "/forgot-password", {"email": GRACE})
    link = mailbox.last_link(GRACE, "/reset-password")
    browser = app.test_client()
    assert browser.get(link[link.index("/reset-password"):]).status_code == 302  # token kept
    reset = submit(browser, "/reset-password", {"new_password": NEW_PASSWORD})
    assert reset.status_code in (200, 302), reset.get_data(as_text=True)
    assert account(app).password_hash is not None
    with app.app_context():
        assert not db.session.scalar(select(Passkey.signs_in_alone))
    assert grace.get("/account").status_code == 302  # every session ended


