"""The undo link of an address change is the owner's way back, and whoever made the change cannot
defeat it (issue 33, finding 1): every undo link of the last seven days works and gives back its
own address; the address it gives back is held for it, through every door that gives an account
an address; an undo ends the mover's sessions and the links of the changes made after it."""

from __future__ import annotations

from datetime import timedelta

import pytest

from app.domain.accounts import identities
from app.domain.accounts.errors import AccountExists
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.domain.lifecycle import address_change
from app.extensions import db
from app.infra.lanes import Job
from app.models import User
from tests.support import admin
from tests.support.api import mailed_token as _token
from tests.support.http import bearer_of as _bearer
from tests.support.pages import submit

OWNER, MOVER, MOVER_AGAIN = "ada@example.com", "thief@evil.example", "thief2@evil.example"
PASSPHRASE = "a long enough passphrase"


@pytest.fixture
def settings():
    from tests.support.oidc import SITES
    return {"CLIENT_SITES": SITES}


def _open(client, path, token):
    """A mailed link's page, then its button (opening alone changes nothing)."""
    return submit(client, f"{path}?token={token}", {"token": token})


def _move(client, mailbox, tokens, password, to):
    """The mover (who has the password and a session) moves the account to `to`."""
    asked = client.post("/api/v2/auth/email", headers=_bearer(tokens),
                        json={"new_email": to, "password": password})
    assert asked.status_code == 202, asked.get_json()
    assert _open(client, "/email-change", _token(mailbox, to, "/email-change")).status_code == 200


def _email(app, user_id):
    with app.app_context():
        return db.session.get(User, user_id).email


@pytest.fixture
def moved_twice(app, client, user, login, mailbox, clock):
    """A -> B -> C by the mover: (the owner's undo to A, the mover's undo to B, the mover's
    tokens)."""
    tokens = login(user)
    _move(client, mailbox, tokens, user.password, MOVER)
    to_owner = _token(mailbox, OWNER, "/email-change/undo")
    clock.advance(60)
    _move(client, mailbox, tokens, user.password, MOVER_AGAIN)
    to_mover = _token(mailbox, MOVER, "/email-change/undo")
    assert _email(app, user.id) == MOVER_AGAIN
    return to_owner, to_mover, tokens


def test_a_second_change_leaves_the_owners_undo_working(app, client, user, moved_twice):
    to_owner, _, tokens = moved_twice
    undone = _open(app.test_client(), "/email-change/undo", to_owner)
    assert undone.status_code == 200 and OWNER in undone.text
    assert _email(app, user.id) == OWNER
    assert client.get("/api/v2/auth/verify", headers=_bearer(tokens)).status_code == 401


def test_the_owners_undo_kills_the_movers_later_undo(app, user, moved_twice):
    to_owner, to_mover, _ = moved_twice
    assert _open(app.test_client(), "/email-change/undo", to_owner).status_code == 200
    refused = _open(app.test_client(), "/email-change/undo", to_mover)
    assert refused.status_code == 400
    assert _email(app, user.id) == OWNER


def test_the_movers_undo_first_does_not_stop_the_owners(app, user, moved_twice):
    to_owner, to_mover, _ = moved_twice
    assert _open(app.test_client(), "/email-change/undo", to_mover).status_code == 200
    assert _email(app, user.id) == MOVER
    assert _open(app.test_client(), "/email-change/undo", to_owner).status_code == 200
    assert _email(app, user.id) == OWNER


def test_every_undo_link_lives_its_seven_days(app, user, moved_twice, clock):
    to_owner, _, _ = moved_twice
    clock.advance(timedelta(days=7).total_seconds() - 120)
    assert _open(app.test_client(), "/email-change/undo", to_owner).status_code == 200
    assert _email(app, user.id) == OWNER


def test_and_no_longer(app, user, moved_twice, clock):
    to_owner, _, _ = moved_twice
    clock.advance(timedelta(days=7).total_seconds() + 1)
    assert _open(app.test_client(), "/email-change/undo", to_owner).status_code == 400
    assert _email(app, user.id) == MOVER_AGAIN


def test_an_undo_ends_the_movers_pending_links(app, client, user, moved_twice, mailbox):
    to_owner, _, tokens = moved_twice
    asked = client.post("/api/v2/auth/email", headers=_bearer(tokens),
                        json={"new_email": "thief3@evil.example", "password": user.password})
    assert asked.status_code == 202
    pending = _token(mailbox, "thief3@evil.example", "/email-change")
    assert _open(app.test_client(), "/email-change/undo", to_owner).status_code == 200
    assert _open(app.test_client(), "/email-change", pending).status_code == 400
    assert _email(app, user.id) == OWNER


def test_an_undo_removes_the_password_the_mover_knew(app, client, user, moved_twice, mailbox):
    """A change asks for the password: whoever made it knows it, and would sign back in with it
    and move the account again. The owner chooses a new one through a reset link to the
    address that came back."""
    to_owner, _, _ = moved_twice
    undone = _open(app.test_client(), "/email-change/undo", to_owner)
    assert undone.status_code == 200 and "password was removed" in undone.text
    for path in ("/api/v2/auth/login", "/api/v1/auth/login"):
        again = client.post(path, json={"email": OWNER, "password": user.password})
        assert again.status_code == 401, (path, again.get_json())
    with app.app_context():
        assert db.session.get(User, user.id).password_hash is None
    assert client.post("/api/v2/auth/forgot-password", json={"email": OWNER}).status_code == 202
    reset = client.post("/api/v2/auth/reset-password", json={
        "token": _token(mailbox, OWNER, "/reset-password"), "new_password": PASSPHRASE})
    assert reset.status_code == 200, reset.get_json()
    assert client.post("/api/v2/auth/login", json={
        "email": OWNER, "password": PASSPHRASE}).status_code == 200


def test_a_change_link_asked_from_an_address_the_account_has_left_is_not_mailed(app, user):
    with app.app_context():
        job = Job(id="job-1", kind="email_change", attempts=0,
                  payload={"user_id": user.id, "to": "thief3@evil.example", "from": MOVER,
                           "client": {}})
        assert address_change.change_link_mail(job) is None  # the account is back at OWNER


# The moved-from address is held for its undo link, through every door -----------------------

@pytest.fixture
def moved(app, client, user, login, mailbox):
    tokens = login(user)
    _move(client, mailbox, tokens, user.password, MOVER)
    return _token(mailbox, OWNER, "/email-change/undo")


def _undo_still_restores(app, user, undo):
    assert _open(app.test_client(), "/email-change/undo", undo).status_code == 200
    assert _email(app, user.id) == OWNER


def test_a_v2_sign_up_cannot_take_a_held_address(app, user, moved):
    taken = app.test_client().post("/api/v2/auth/signup",
                                   json={"email": "Ada@Example.com", "password": PASSPHRASE})
    assert taken.status_code == 409 and taken.get_json()["code"] == "email_taken"
    _undo_still_restores(app, user, moved)


def test_a_hosted_sign_up_cannot_take_a_held_address(app, user, moved):
    browser = app.test_client()
    taken = submit(browser, "/signup", {"email": OWNER, "password": PASSPHRASE})
    assert taken.status_code == 409
    _undo_still_restores(app, user, moved)


def test_a_provider_cannot_make_an_account_at_a_held_address(app, user, moved):
    with app.app_context(), pytest.raises(AccountExists):
        identities.account_for(Profile("github", "4242", OWNER, True, "Ada"), ClientInfo())
    with app.app_context():
        assert db.session.query(User).count() == 1
    _undo_still_restores(app, user, moved)


def test_an_operator_cannot_open_an_account_at_a_held_address(app, client, user, moved):
    support = admin.token(client, admin.register(app, "support", "users:read", "users:write"))
    taken = client.post("/api/admin/v1/users", json={"email": OWNER}, **admin.authorized(support))
    assert taken.status_code == 409 and taken.get_json()["code"] == "email_taken"
    _undo_still_restores(app, user, moved)


def test_the_cli_cannot_create_an_account_at_a_held_address(app, user, moved):
    made = app.test_cli_runner().invoke(args=["users", "create", OWNER, "--password",
                                              PASSPHRASE])
    assert made.exit_code != 0
    _undo_still_restores(app, user, moved)


def test_another_account_cannot_move_to_a_held_address(app, make_user, user, moved, mailbox):
    bob = make_user("bob@example.com")
    browser = app.test_client()
    tokens = browser.post("/api/v2/auth/login",
                          json={"email": bob.email, "password": bob.password}).get_json()
    asked = browser.post("/api/v2/auth/email", headers=_bearer(tokens),
                         json={"new_email": OWNER, "password": bob.password})
    assert asked.status_code == 202  # the same answer as for a free address
    assert [m["Subject"] for m in mailbox.to(OWNER)][-1] == "An address change was refused"
    _undo_still_restores(app, user, moved)


def test_the_hold_ends_with_the_undo_links_seven_days(app, user, moved, clock):
    clock.advance(timedelta(days=7).total_seconds() + 1)
    made = app.test_client().post("/api/v2/auth/signup",
                                  json={"email": OWNER, "password": PASSPHRASE})
    assert made.status_code == 201


def test_the_account_itself_may_move_back_to_its_held_address(app, client, user, login, moved,
                                                              mailbox):
    tokens = client.post("/api/v2/auth/login",
                         json={"email": MOVER, "password": user.password}).get_json()
    _move(client, mailbox, tokens, user.password, OWNER)
    assert _email(app, user.id) == OWNER


def test_an_undo_removes_the_ways_in_added_since_the_change(app, client, user, login, mailbox,
                                                            clock):
    from app.domain.clock import now
    from app.models import Identity, TotpFactor

    with app.app_context():  # the owner's own provider, from before
        db.session.add(Identity(user_id=user.id, provider="google", subject="owner",
                                email=OWNER, created_at=now()))
        db.session.commit()
    clock.advance(60)
    tokens = login(user)
    _move(client, mailbox, tokens, user.password, MOVER)
    undo = _token(mailbox, OWNER, "/email-change/undo")
    clock.advance(60)
    with app.app_context():  # the mover's GitHub and authenticator app, after the move
        db.session.add(Identity(user_id=user.id, provider="github", subject="mover",
                                email=MOVER, created_at=now()))
        db.session.add(TotpFactor(user_id=user.id, secret="JBSWY3DPEHPK3PXP", created_at=now(),
                                  confirmed_at=now()))
        db.session.commit()
    assert _open(app.test_client(), "/email-change/undo", undo).status_code == 200
    with app.app_context():
        assert [i.subject for i in db.session.query(Identity)] == ["owner"]
        assert db.session.query(TotpFactor).count() == 0
