"""A provider sign-in cannot make an account at an address that an undo link holds (issue 33,
finding 1 (b)), on the hosted pages and through the API's provider flow: the owner's undo link
still gives the address back."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import User
from tests.support import providers as fixtures
from tests.support.oauth import landing, provider_settings, sign_in
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("oauth")

oidc_server = fixtures.oidc_server
oidc_server_clean = fixtures.oidc_server_clean
github_server_session = fixtures.github_server_session
github_server = fixtures.github_server

OWNER, MOVER = "ada@example.com", "thief@evil.example"


@pytest.fixture
def settings(oidc_server_clean, github_server):
    return provider_settings(oidc_server_clean, github_server)


@pytest.fixture
def undo(app, client, user, login, mailbox):
    """The account moved from OWNER to MOVER: the owner's undo link."""
    tokens = login(user)
    asked = client.post("/api/v2/auth/email", json={"new_email": MOVER, "password": user.password},
                        headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert asked.status_code == 202
    change = mailbox.last_link(MOVER, "/email-change").split("token=")[1]
    assert submit(client, f"/email-change?token={change}", {"token": change}).status_code == 200
    return mailbox.last_link(OWNER, "/email-change/undo").split("token=")[1]


def _github_says(github_server, email):
    github_server.next_login(id=9001, login="someone", name="Some One", emails=[
        {"email": email, "primary": True, "verified": True, "visibility": "public"}])


def _accounts(app):
    with app.app_context():
        return sorted(db.session.scalars(db.select(User.email)).all())


@pytest.mark.parametrize("start", ["/login/github", None])  # hosted; the API's flow
def test_a_provider_sign_in_makes_no_account_at_a_held_address(app, github_server, user, undo,
                                                               start):
    _github_says(github_server, OWNER)
    location = sign_in(app.test_client(), "github", start)
    _, query = landing(location)
    assert query.get("error") == "account_exists", location
    assert _accounts(app) == [MOVER]
    assert submit(app.test_client(), f"/email-change/undo?token={undo}",
                  {"token": undo}).status_code == 200
    assert _accounts(app) == [OWNER]
