"""Pre-hijacked accounts and second factors: Mallory signs up with Ada's address and a password of
her own, and Ada, who never signed up, opens the confirmation link she was mailed. The address is
proved, but the password is still Mallory's. A factor Mallory added then would outlive Ada's
reset (factors do), and a passkey would sign Mallory in alone ever after. So a factor needs the
password to be the address holder's: set by a reset link, or proved by a confirmation link
opened in a browser signed in to the account (User.password_is_the_holders)."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from app.domain.factors import passkeys
from app.extensions import db
from app.models import User
from tests.support.accounts import OWNED, PROVED_LONG_AGO
from tests.support.pages import open_mailed_link, submit
from tests.support.passkeys import add_passkey, ceremony_options
from tests.support.second_factors import enrol
from tests.support.soft_authenticator import SoftAuthenticator

pytestmark = pytest.mark.app_settings("pages")

ADA = "ada@example.com"
MALLORYS_PASSWORD = "mallory's own passphrase"
ORIGIN = "http://localhost:5000"


@pytest.fixture
def settings(settings):
    return {**settings, "PUBLIC_URL": ORIGIN}


def open_link(client, mailbox, address):
    link = mailbox.last_link(address, "/confirm-email")
    return open_mailed_link(client, link)


def passkey_options(client):
    return ceremony_options(client, "/account/passkeys/options", "/account")


def may_add_factors(client) -> bool:
    """Whether this signed-in browser may add a passkey (and an authenticator app), both asked."""
    passkey = passkey_options(client).status_code
    totp = submit(client, "/account/totp/start", {}, token_from="/account").headers["Location"]
    assert (passkey == 200) == (totp == "/account/totp"), (passkey, totp)
    return passkey == 200


@pytest.fixture
def mallory(client, mailbox):
    """Mallory's browser, signed up with Ada's address; Ada has opened the link in her own."""
    created = submit(client, "/signup", {"email": ADA, "password": MALLORYS_PASSWORD})
    assert created.status_code == 302 and created.headers["Location"] == "/account"
    ada = client.application.test_client()
    assert open_link(ada, mailbox, ADA).status_code == 200
    return client


def test_once_the_owner_confirms_the_squatter_still_cannot_add_a_factor(mallory):
    refused = passkey_options(mallory)
    assert refused.status_code == 403
    assert refused.get_json()["error"].startswith("Before adding a second factor")
    assert not may_add_factors(mallory)
    page = mallory.get("/account").get_data(as_text=True)
    assert "show that this account is yours" in page and "Add a passkey" not in page


def test_changing_the_password_proves_nothing(mallory):
    changed = submit(mallory, "/account/password", {
        "current_password": MALLORYS_PASSWORD, "new_password": "another of mallory's phrases"},
        token_from="/account")
    assert changed.status_code == 302
    assert not may_add_factors(mallory)


def test_the_proof_link_goes_to_the_owners_inbox_and_proves_nothing_opened_elsewhere(
        app, mallory, mailbox):
    before = len(mailbox.to(ADA))
    asked = submit(mallory, "/account/confirm-email", {}, token_from="/account")
    assert asked.status_code == 302
    assert len(mailbox.to(ADA)) == before + 1  # to Ada, whom Mallory cannot read
    assert open_link(app.test_client(), mailbox, ADA).status_code == 200  # Ada, signed out
    assert not may_add_factors(mallory)


def test_the_proof_link_opened_signed_in_to_another_account_proves_nothing(
        app, mallory, mailbox, make_user):
    """Ada opens it in a browser signed in to another account of hers: that proves nothing of
    the password of the account the link is for (Mallory's)."""
    assert submit(mallory, "/account/confirm-email", {}, token_from="/account").status_code == 302
    ada = app.test_client()
    work = make_user("ada.work@example.com", **OWNED)
    assert submit(ada, "/login", {"email": work.email, "password": work.password}
                  ).status_code == 302
    assert open_link(ada, mailbox, ADA).status_code == 200
    assert not may_add_factors(mallory)


def test_the_owners_reset_then_leaves_the_squatter_nothing(app, mallory, mailbox):
    ada = app.test_client()
    assert submit(ada, "/forgot-password", {"email": ADA}).status_code == 202
    link = mailbox.last_link(ADA, "/reset-password")
    ada.get(link[link.index("/reset-password"):])
    assert submit(ada, "/reset-password", {"new_password": "ada's own new passphrase"},
                  token_from="/reset-password").status_code == 200
    assert mallory.get("/account").status_code == 302  # signed out
    assert submit(app.test_client(), "/login", {
        "email": ADA, "password": MALLORYS_PASSWORD}).status_code == 401
    assert submit(ada, "/login", {"email": ADA, "password": "ada's own new passphrase"}
                  ).status_code == 302
    assert may_add_factors(ada)  # the password is now the address holder's


def test_a_reset_link_mailed_to_an_address_the_account_no_longer_has_proves_nothing(
        app, mallory, mailbox):
    """The link proves the inbox it went to: if the account's address is another by now, the
    password it sets is not shown to be that address's holder's (whatever the old one was)."""
    assert submit(app.test_client(), "/forgot-password", {"email": ADA}).status_code == 202
    link = mailbox.last_link(ADA, "/reset-password")
    with app.app_context():
        db.session.execute(update(User).where(User.email_key == ADA)
                           .values(email="ada@elsewhere.example",
                                   email_key="ada@elsewhere.example",
                                   password_proved_at=PROVED_LONG_AGO))  # proved before
        db.session.commit()
    stranger = app.test_client()
    stranger.get(link[link.index("/reset-password"):])
    assert submit(stranger, "/reset-password", {"new_password": "a passphrase of the link's"},
                  token_from="/reset-password").status_code == 200
    with app.app_context():
        owner = db.session.scalars(select(User).where(
            User.email_key == "ada@elsewhere.example")).one()
        assert owner.password_proved_at is None and not owner.password_is_the_holders


# The owner's own journeys ----------------------------------------------------------------------

def test_signing_up_and_confirming_in_the_same_browser_proves_the_password(client, mailbox):
    assert submit(client, "/signup", {"email": ADA, "password": "ada's own passphrase"}
                  ).status_code == 302
    assert not may_add_factors(client)
    assert open_link(client, mailbox, ADA).status_code == 200
    assert may_add_factors(client)


def test_confirmed_on_another_device_a_link_from_the_account_page_proves_it(app, client,
                                                                            mailbox, clock):
    assert submit(client, "/signup", {"email": ADA, "password": "ada's own passphrase"}
                  ).status_code == 302
    assert open_link(app.test_client(), mailbox, ADA).status_code == 200  # her phone
    assert not may_add_factors(client)
    assert submit(client, "/account/confirm-email", {}, token_from="/account").status_code == 302
    assert open_link(client, mailbox, ADA).status_code == 200
    assert may_add_factors(client)
    _secret, codes = enrol(client, clock)
    assert len(codes) == 10
    added = add_passkey(client, SoftAuthenticator(), ORIGIN)
    assert added.headers["Location"] == "/account#passkeys"  # added (a refusal: #second-factor)
    with app.app_context():
        user = db.session.scalars(select(User).where(User.email == ADA)).one()
        assert len(passkeys.of(user)) == 1


def test_the_api_resend_mails_no_proof_link_to_a_confirmed_address(app, client, mailbox):
    """Only the signed-in owner asks for one: strangers cannot mail confirmed accounts."""
    assert submit(client, "/signup", {"email": ADA, "password": "ada's own passphrase"}
                  ).status_code == 302
    assert open_link(app.test_client(), mailbox, ADA).status_code == 200
    before = len(mailbox.to(ADA))
    assert app.test_client().post("/api/v2/auth/resend-confirmation",
                                  json={"email": ADA}).status_code == 202
    assert len(mailbox.to(ADA)) == before
