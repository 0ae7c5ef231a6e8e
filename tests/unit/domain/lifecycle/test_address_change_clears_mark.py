"""The mark that an account's password was proved by its address's holder belongs to that address:
an address change clears it (issue 33, finding 3). Otherwise a stranger who presses "Use this
address" on a change link sent to them would later find their GitHub sign-in linked, unasked,
into an account whose password the requester holds."""

from __future__ import annotations

import pytest

from app.domain.accounts import identities
from app.domain.accounts.errors import AccountNeedsProof
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.extensions import db
from app.models import Identity, User
from tests.support.accounts import OWNED
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("oauth")

STRANGER = "stranger@example.com"


def _change_to(app, client, account, to, mailbox):
    tokens = client.post("/api/v2/auth/login", json={"email": account.email,
                                                     "password": account.password}).get_json()
    asked = client.post("/api/v2/auth/email", json={"new_email": to, "password": account.password},
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert asked.status_code == 202
    token = mailbox.last_link(to, "/email-change").split("token=")[1]
    return token


def test_a_change_clears_the_mark_and_a_provider_then_needs_the_password(app, client,
                                                                         make_user, mailbox):
    requester = make_user("req@example.com", **OWNED)
    with app.app_context():
        assert db.session.get(User, requester.id).password_is_the_holders
    token = _change_to(app, client, requester, STRANGER, mailbox)
    stranger = app.test_client()  # presses "Use this address"
    pressed = submit(stranger, f"/email-change?token={token}", {"token": token})
    assert pressed.status_code == 200
    with app.app_context():
        moved = db.session.get(User, requester.id)
        assert moved.email == STRANGER and moved.password_proved_at is None
        assert not moved.password_is_the_holders
        with pytest.raises(AccountNeedsProof):
            identities.account_for(Profile("github", "4242", STRANGER, True, "Stranger"),
                                    ClientInfo())
        db.session.rollback()
        assert db.session.query(Identity).count() == 0


def test_an_undo_clears_it_too(app, client, make_user, mailbox):
    requester = make_user("req@example.com", **OWNED)
    token = _change_to(app, client, requester, STRANGER, mailbox)
    submit(app.test_client(), f"/email-change?token={token}", {"token": token})
    undo = mailbox.last_link("req@example.com", "/email-change/undo").split("token=")[1]
    with app.app_context():  # the stranger's mark, made after the move
        db.session.get(User, requester.id).password_proved_at = OWNED["password_proved_at"]
        db.session.commit()
    assert submit(app.test_client(), f"/email-change/undo?token={undo}",
                  {"token": undo}).status_code == 200
    with app.app_context():
        back = db.session.get(User, requester.id)
        assert back.email == "req@example.com" and back.password_proved_at is None
