"""Signing up with a passkey on the hosted pages (app/pages/passkey_signup.py): the address, the
code mailed to it, the passkey; and the attacker's journeys (another person's address, guessed,
stale or replayed codes)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.domain.accounts import email_codes
from app.extensions import db
from app.models import AuditEvent, AuthSession, EmailCode, Passkey, User
from tests.support.accounts import OWNED
from tests.support.email_codes import mailed_code
from tests.support.pages import submit
from tests.support.passkey_first import ask_code, enter_code, sign_up_with_passkey
from tests.support.passkeys import ceremony_options
from tests.support.soft_authenticator import SoftAuthenticator

ORIGIN = "http://localhost:5000"
GRACE = "grace@example.com"


@pytest.fixture
def settings(settings):
    return {**settings, "PUBLIC_URL": ORIGIN}


@pytest.fixture
def authenticator():
    return SoftAuthenticator()


def account(app, address=GRACE):
    with app.app_context():
        return db.session.scalars(select(User).where(User.email == address)).one_or_none()


def _rows_of(app, model):
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(model))


def _sign_in_with_passkey(client, authenticator):
    import json
    asked = ceremony_options(client, "/login/passkey/options", "/login")
    answer = authenticator.assert_(asked.get_json(), ORIGIN)
    return submit(client, "/login/passkey", {"credential": json.dumps(answer)},
                  token_from="/login")


def test_the_sign_up_makes_an_account_with_a_passkey_and_no_password(
        app, client, mailbox, authenticator):
    added = sign_up_with_passkey(client, mailbox, authenticator, ORIGIN, GRACE)
    assert "Your recovery codes" in added.get_data(as_text=True)
    made = account(app)
    assert made.password_hash is None and made.password_changed_at is None
    assert made.email_verified and made.email_verified_at is not None
    assert made.full_name == "Grace"
    with app.app_context():
        [passkey] = db.session.scalars(select(Passkey).where(Passkey.user_id == made.id)).all()
        assert passkey.signs_in_alone
        assert db.session.scalar(select(AuditEvent.event).where(
            AuditEvent.user_id == made.id, AuditEvent.event == "signed_up")) == "signed_up"
    # Another browser signs in with the passkey alone.
    other = app.test_client()
    assert _sign_in_with_passkey(other, authenticator).status_code == 302
    assert other.get("/account").status_code == 200


def test_the_sign_up_page_is_offered_from_the_password_sign_up(client):
    page = client.get("/signup").get_data(as_text=True)
    assert "/signup/passkey" in page
    assert client.get("/signup/passkey").status_code == 200


def test_the_code_page_signs_the_browser_in_to_make_its_passkey(app, client, mailbox):
    assert ask_code(client, GRACE).status_code == 200
    entered = enter_code(client, GRACE, mailed_code(mailbox, GRACE))
    assert entered.status_code == 302
    page = client.get("/signup/passkey/create")
    assert page.status_code == 200 and "Create your passkey" in page.get_data(as_text=True)
    assert "/static/passkeys.js" in page.get_data(as_text=True)  # the button's script
    with app.app_context():
        [session] = db.session.scalars(select(AuthSession)).all()
        assert session.provider == "email_code"


def test_a_taken_address_is_refused_as_the_password_sign_up_refuses_it(
        app, client, make_user, mailbox):
    make_user(GRACE, **OWNED)
    refused = ask_code(client, GRACE)
    password_sign_up = submit(client, "/signup", {"email": GRACE, "password": "x" * 20,
                                                  "full_name": "Grace"})
    assert refused.status_code == password_sign_up.status_code == 409
    said = "An account with this email already exists. Sign in instead, or reset your password."
    assert said in refused.get_data(as_text=True)
    assert said in password_sign_up.get_data(as_text=True)
    assert not [m for m in mailbox.to(GRACE) if "code" in m["Subject"]]
    assert _rows_of(app, EmailCode) == 0


def test_a_wrong_code_makes_no_account(app, client, mailbox):
    ask_code(client, GRACE)
    right = mailed_code(mailbox, GRACE)
    wrong = f"{(int(right) + 1) % 10 ** 8:08d}"
    refused = enter_code(client, GRACE, wrong)
    assert refused.status_code == 401
    assert "This code is wrong, expired or already used" in refused.get_data(as_text=True)
    assert account(app) is None
    assert client.get("/account").status_code == 302  # not signed in


def test_guessing_kills_the_code_after_a_few_tries(app, client, mailbox):
    ask_code(client, GRACE)
    right = mailed_code(mailbox, GRACE)
    for n in range(email_codes.MAX_ATTEMPTS):
        assert enter_code(client, GRACE, f"{(int(right) + n + 1) % 10 ** 8:08d}").status_code == 401
    assert enter_code(client, GRACE, right).status_code == 401  # the right one, too late
    assert account(app) is None


def test_a_code_proves_only_the_address_it_was_sent_to(app, client, mailbox):
    """Someone signing up with another person's address gets no code; their own address's
    code does not open an account at the other one."""
    ask_code(client, "mallory@example.com")
    own = mailed_code(mailbox, "mallory@example.com")
    ask_code(client, GRACE)  # the victim's address: the code goes to the victim
    assert enter_code(client, GRACE, own).status_code == 401
    assert account(app) is None
    assert mailed_code(mailbox, GRACE) != own


def test_an_expired_code_is_refused(app, client, mailbox, clock):
    ask_code(client, GRACE)
    code = mailed_code(mailbox, GRACE)
    clock.advance(email_codes.TTL.total_seconds() + 1)
    assert enter_code(client, GRACE, code).status_code == 401
    assert account(app) is None


def test_a_new_code_replaces_the_last_and_a_used_one_opens_nothing_again(
        app, client, mailbox, authenticator):
    ask_code(client, GRACE)
    first = mailed_code(mailbox, GRACE)
    ask_code(client, GRACE)
    second = mailed_code(mailbox, GRACE)
    if first != second:
        assert enter_code(client, GRACE, first).status_code == 401
    assert enter_code(client, GRACE, second).status_code == 302
    replay = enter_code(app.test_client(), GRACE, second)
    assert replay.status_code in (401, 409)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(User)
                                 .where(User.email == GRACE)) == 1
        assert db.session.scalar(select(func.count()).select_from(AuthSession)) == 1


class TestMailLimit:
    @pytest.fixture
    def settings(self, settings):
        return {**settings, "RATELIMIT_ENABLED": True, "LIMIT_FORGOT": "3 per hour",
                "LIMIT_SIGNUP": "1000 per minute"}

    def test_codes_mailed_to_one_address_are_limited_whoever_asks(self, app, mailbox):
        answers = [ask_code(app.test_client(), GRACE).status_code for _ in range(5)]
        assert answers == [200, 200, 200, 429, 429]  # as many as forgot-password mails
        assert len(mailbox.to(GRACE)) == 3


def test_a_stranger_cannot_register_a_passkey_on_someone_elses_account(
        app, client, make_user, authenticator):
    """Without a session of the account, the ceremony that adds a passkey is refused."""
    make_user(GRACE, **OWNED)
    asked = ceremony_options(client, "/account/passkeys/options", "/login")
    assert asked.status_code in (302, 401)
    assert _rows_of(app, Passkey) == 0
