"""Linking a provider from the account page asks for a recent sign-in, as adding a second factor
does (issue 21, finding 5): an old or stolen session could plant its own GitHub login, which
outlives "sign out everywhere" and a password change. Checked when the link starts and again
when GitHub comes back. Through the test client and the fake GitHub."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from sqlalchemy import select

from app.domain.accounts import identities
from app.domain.accounts.errors import LinkNeedsRecentSignIn
from app.domain.accounts.providers import Profile
from app.domain.audit import ClientInfo
from app.extensions import db
from app.models import AuthSession, Identity, User
from tests.support import providers as fixtures
from tests.support.accounts import OWNED
from tests.support.oauth import OUR_CALLBACK
from tests.support.pages import csrf_token, submit
from tests.support.sites import OAUTH_SITES

pytestmark = pytest.mark.app_settings("oauth")

github_server_session = fixtures.github_server_session
github_server = fixtures.github_server

STEP_UP_SECONDS = 600  # the default: app/config.py
LINKED_MAIL = "GitHub was linked to your"


@pytest.fixture
def settings(github_server):
    return {"CLIENT_SITES": OAUTH_SITES, **fixtures.github_settings(github_server),
            "PROVIDER_TIMEOUT": 2}


@pytest.fixture
def owner(make_user):
    return make_user(**OWNED)


def sign_in(client, account, **query):
    response = submit(client, "/login" + (f"?prompt={query['prompt']}" if query else ""),
                      {"email": account.email, "password": account.password})
    assert response.status_code == 302, response.text


def start_link(client):
    return client.post("/account/link/github",
                       data={"csrf_token": csrf_token(client, "/account")})


def come_back(client, started):
    """Pass GitHub (a login of someone's, with a verified address) and come back."""
    back = urlsplit(fixtures.follow_authorization(started.headers["Location"],
                                                  OUR_CALLBACK.format("github")))
    return client.get(f"{back.path}?{back.query}")


def linked(app, user_id):
    with app.app_context():
        return list(db.session.scalars(select(Identity.provider).where(
            Identity.user_id == user_id)))


def github_login(github_server):
    github_server.next_login(id=4242, login="someone", name="Some One", emails=[
        {"email": "someone@elsewhere.example", "primary": True, "verified": True,
         "visibility": "public"}])


def test_an_old_session_cannot_start_a_link(app, client, owner, clock, github_server, mailbox):
    sign_in(client, owner)
    clock.advance(STEP_UP_SECONDS + 1)
    page = client.get("/account").text
    assert 'action="/account/link/github"' not in page
    assert "To link it, <a href=\"/login?prompt=login\">sign in again</a> first." in page
    response = start_link(client)
    assert response.status_code == 302
    assert response.headers["Location"] == "/account?error=step_up_required"
    assert github_server.last_authorize is None  # never sent to GitHub
    assert "To link a sign-in provider, sign in again first." in client.get(
        response.headers["Location"]).text
    assert linked(app, owner.id) == []
    assert not any(LINKED_MAIL in m.get_body(("plain",)).get_content()
                   for m in mailbox.to(owner.email))


def test_a_fresh_sign_in_links_and_the_owner_is_mailed(app, client, owner, clock, github_server,
                                                       mailbox):
    sign_in(client, owner)
    clock.advance(STEP_UP_SECONDS + 1)
    sign_in(client, owner, prompt="login")  # the account page's "sign in again"
    assert 'action="/account/link/github"' in client.get("/account").text
    github_login(github_server)
    started = start_link(client)
    assert started.status_code == 302 and "/login/oauth/authorize" in started.headers["Location"]
    back = come_back(client, started)
    assert back.headers["Location"] == "/account?linked=github", back.text
    assert linked(app, owner.id) == ["github"]
    notice = mailbox.to(owner.email)[-1].get_body(("plain",)).get_content()
    assert LINKED_MAIL in notice


def test_a_link_started_in_time_but_finished_after_the_window_is_refused(app, client, owner,
                                                                         clock, github_server,
                                                                         mailbox):
    """The pending link is bound to this browser and account, but lives longer than the window
    is left: the window is checked again when GitHub comes back."""
    sign_in(client, owner)
    clock.advance(STEP_UP_SECONDS - 10)
    github_login(github_server)
    started = start_link(client)
    assert started.status_code == 302 and "/login/oauth/authorize" in started.headers["Location"]
    clock.advance(20)  # a while at GitHub
    back = come_back(client, started)
    assert back.headers["Location"] == "/account?error=step_up_required", back.text
    assert linked(app, owner.id) == []
    assert not any(LINKED_MAIL in m.get_body(("plain",)).get_content()
                   for m in mailbox.to(owner.email))


def test_the_rule_holds_where_the_identity_is_written(app, owner, clock):
    """Not only at the account page: the domain refuses a link for a session signed in too long
    ago, whatever called it."""
    with app.app_context():
        user = db.session.get(User, owner.id)
        session = AuthSession(user_id=user.id, provider="password", created_at=clock())
        clock.advance(STEP_UP_SECONDS + 1)
        with pytest.raises(LinkNeedsRecentSignIn):
            identities.link(user, session, Profile("github", "4242", None, True, "S"),
                            ClientInfo())
    assert linked(app, owner.id) == []
