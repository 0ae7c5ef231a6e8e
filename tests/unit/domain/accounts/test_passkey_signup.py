"""A passkey-first account (accounts/passkey_signup.py) and the ways in: the password sign-in on
every door refused like a wrong password, an email code with the passkey as the second step, the
last passkey kept, providers linked and unlinked, a code mail with no link to follow."""

from __future__ import annotations

import json
import re

import pytest
from sqlalchemy import select

from app.domain import sign_in
from app.domain.accounts import identities
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.domain.factors.errors import LastSignInMethod
from app.domain.factors.pending import SecondFactorRequired
from app.extensions import db
from app.models import AuthSession, Identity, Passkey
from tests.support import email_codes
from tests.support.accounts import PASSWORD
from tests.support.pages import submit
from tests.support.passkey_first import (
    GRACE,
    NEW_PASSWORD,
    ORIGIN,
    account,
    flashed,
    sign_up_with_passkey,
)


@pytest.fixture
def settings(settings):
    return {**settings, "PUBLIC_URL": ORIGIN}


# Signing in with a password ---------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/v2/auth/login", "/api/v1/auth/login"])
def test_a_password_sign_in_is_refused_as_a_wrong_password_is(app, grace, make_user, path):
    make_user("known@example.com")
    answers = [app.test_client().post(path, json={"email": email, "password": password})
               for email, password in ((GRACE, PASSWORD), (GRACE, ""), ("known@example.com", "no"),
                                       ("nobody@example.com", PASSWORD))]
    assert {a.status_code for a in answers} - {400, 422} == {401}
    bodies = {json.dumps({k: v for k, v in a.get_json().items() if k != "instance"},
                         sort_keys=True) for a in answers if a.status_code == 401}
    assert len(bodies) == 1


def test_the_hosted_sign_in_with_a_password_is_refused_as_a_wrong_password_is(app, grace,
                                                                              make_user):
    make_user("known@example.com")
    ours = submit(app.test_client(), "/login", {"email": GRACE, "password": PASSWORD})
    wrong = submit(app.test_client(), "/login", {"email": "known@example.com",
                                                 "password": "not it at all"})
    assert ours.status_code == wrong.status_code == 401

    def page(response, email):
        text = re.sub(r'name="csrf_token"[^>]*>', "", response.get_data(as_text=True))
        return text.replace(email, "(address)")
    assert page(ours, GRACE) == page(wrong, "known@example.com")


def test_an_email_code_signs_in_with_the_passkey_or_a_recovery_code_as_the_second_step(
        app, grace, mailbox):
    """The mailbox alone does not open an account that has a passkey: the second step is
    asked, as after any first factor (on v2, a recovery code: passkeys are the hosted pages')."""
    api = app.test_client()
    assert email_codes.ask(api, GRACE).status_code == 202
    signed_in = email_codes.verify(api, GRACE, email_codes.mailed_code(mailbox, GRACE))
    assert signed_in.status_code == 200, signed_in.get_json()
    assert signed_in.get_json()["mfa_required"] is True
    assert signed_in.get_json()["methods"] == ["recovery_code"]


@pytest.fixture
def grace_on_the_api(app, mailbox, authenticator):
    """Grace signed up on the hosted pages, then on the API: a mailed code and a recovery code
    (the API's second step). Her access token, and her recovery codes left."""
    added = sign_up_with_passkey(app.test_client(), mailbox, authenticator, ORIGIN, GRACE)
    recovery = re.findall(r"<li><code>([a-z0-9-]+)</code></li>", added.get_data(as_text=True))
    api = app.test_client()
    email_codes.ask(api, GRACE)
    pending = email_codes.verify(api, GRACE, email_codes.mailed_code(mailbox, GRACE)).get_json()
    tokens = api.post("/api/v2/auth/mfa", json={"mfa_token": pending["mfa_token"],
                                               "code": recovery[0]})
    assert tokens.status_code == 200, tokens.get_json()
    return tokens.get_json()["access_token"], recovery[1:]


def test_the_api_asks_a_code_of_a_passkey_first_account_for_a_new_address_and_leaving(
        app, grace_on_the_api, mailbox):
    token, recovery = grace_on_the_api
    api, bearer = app.test_client(), {"Authorization": f"Bearer {token}"}
    unproved = api.post("/api/v2/auth/email", json={"new_email": "grace@new.example"},
                        headers=bearer)
    guessed = api.post("/api/v2/auth/email", headers=bearer,
                       json={"new_email": "grace@new.example", "password": PASSWORD})
    assert unproved.status_code == guessed.status_code == 403
    assert unproved.get_json()["code"] == guessed.get_json()["code"] == "step_up_required"
    moved = api.post("/api/v2/auth/email", headers=bearer,
                     json={"new_email": "grace@new.example", "code": recovery[0]})
    assert moved.status_code == 202
    left = api.delete("/api/v2/auth/account", headers=bearer, json={"code": recovery[1]})
    assert left.status_code == 202 and account(app).deletion_scheduled_at is not None


# The ways in ------------------------------------------------------------------------------------

def test_the_last_passkey_of_an_account_without_a_password_stays(app, grace):
    with app.app_context():
        passkey_id = db.session.scalar(select(Passkey.id))
    removed = submit(grace, f"/account/passkeys/{passkey_id}/remove", {}, token_from="/account")
    assert removed.status_code == 302
    assert "only way to sign in" in flashed(grace)
    with app.app_context():
        assert db.session.scalar(select(Passkey.id)) == passkey_id
    # With a password, it may go.
    submit(grace, "/account/password/set", {"new_password": NEW_PASSWORD}, token_from="/account")
    submit(grace, f"/account/passkeys/{passkey_id}/remove", {}, token_from="/account")
    with app.app_context():
        assert db.session.scalar(select(Passkey.id)) is None


def test_a_provider_of_a_passkey_first_account_may_be_unlinked(app, grace, mailbox):
    """Its passkey is a way in: the provider is not the last one."""
    assert mailbox.messages  # the outbox is done: nothing else writes now
    user = account(app)
    with app.app_context():
        session = db.session.scalars(select(AuthSession)).first()
        db.session.add(Identity(user_id=user.id, provider="github", subject="42",
                                email=GRACE, created_at=session.created_at))
        db.session.commit()
        identities.unlink(user.id, "github", ClientInfo())
        assert identities.providers_of(user.id) == []
        # The unlink's mail is written by the outbox's own thread: this transaction ends and
        # waits for it, or its next write would meet a database written since it began.
        db.session.commit()
        assert mailbox.messages
        # Without the passkey, the provider would be the account's only way in.
        db.session.add(Identity(user_id=user.id, provider="github", subject="42",
                                email=GRACE, created_at=session.created_at))
        db.session.execute(Passkey.__table__.delete())
        db.session.commit()
        with pytest.raises(LastSignInMethod):
            identities.unlink(user.id, "github", ClientInfo())


def test_a_provider_with_the_address_links_and_asks_the_passkey_as_the_second_step(
        app, grace, mailbox):
    """Nobody else can know a password the account does not have: a provider that verified
    the address links unasked (as for any account whose password is its holder's), and the
    sign-in still asks the account's second step."""
    assert mailbox.messages  # the outbox is done: nothing else writes now
    with app.test_request_context():
        outcome = sign_in.with_provider(Profile("github", "42", GRACE, True, "Grace"),
                                        sign_in.ApiSignIn(client=ClientInfo()))
        assert isinstance(outcome, SecondFactorRequired)
        assert identities.providers_of(account(app).id) == ["github"]
    assert any("GitHub" in m["Subject"] for m in mailbox.to(GRACE))


def test_the_code_mail_holds_no_link_a_scanner_could_follow(app, grace, mailbox):
    [mail] = [m for m in mailbox.to(GRACE) if "code" in m["Subject"].lower()]
    assert "http" not in mail.get_body(("plain",)).get_content().split("Account:")[0]
