"""No code, session or token before the second factor on the provider and link ways in: GitHub
(a local stand-in) signs in to an account that has an authenticator app.

app/domain/sign_in.py: each kind of sign-in opens what its type says, and asks an account's
second step where its client can answer it."""

from datetime import UTC, datetime
from urllib.parse import urlsplit

import pytest
from sqlalchemy import update

from app.domain import sign_in
from app.domain.audit import ClientInfo
from app.domain.factors.errors import InvalidMfaToken
from app.domain.factors.pending import SecondFactorRequired
from app.domain.factors.second_factors import Purpose
from app.domain.sessions.browser_sessions import BrowserSignIn
from app.domain.sessions.destinations import ToApi, ToBrowser, ToSite
from app.domain.sessions.handoff import HandTo
from app.domain.sessions.sessions import IssuedTokens
from app.domain.tokens import tokens
from app.extensions import db
from app.models import Passkey, PendingSignIn, User
from tests.support import providers as fixtures
from tests.support.accounts import OWNED
from tests.support.oauth import OUR_CALLBACK, exchange, landing
from tests.support.pages import submit
from tests.support.second_factors import code_at, enrolled_user
from tests.support.sites import OAUTH_SITES, SYMBOLS_CALLBACK

pytestmark = pytest.mark.app_settings("oauth")

github_server_session = fixtures.github_server_session
github_server = fixtures.github_server
START = {"redirect_uri": SYMBOLS_CALLBACK, "state": "site-state"}


@pytest.fixture
def settings(github_server):
    return {"CLIENT_SITES": OAUTH_SITES, **fixtures.github_settings(github_server),
            "PROVIDER_TIMEOUT": 2}


@pytest.fixture
def enrolled(app, make_user, clock):
    """octo@example.com (GitHub's verified address here), its password shown to be its
    holder's (so no one else can know it: GitHub links to it), with an authenticator app."""
    return enrolled_user(app, make_user, clock, "octo@example.com", email_verified=True,
                         email_verified_at=clock.now)


def unproved_password(app, enrolled):
    """`enrolled`, its password no longer known to be the address holder's."""
    with app.app_context():
        db.session.execute(update(User).where(User.id == enrolled[0].id)
                           .values(password_proved_at=None))
        db.session.commit()
    return enrolled


def through_github(client, start_path):
    start = client.get(start_path, query_string=START)
    assert start.status_code == 302, start.get_data(as_text=True)
    back = fixtures.follow_authorization(start.headers["Location"], OUR_CALLBACK.format("github"))
    parts = urlsplit(back)
    return client.get(f"{parts.path}?{parts.query}")


@pytest.mark.parametrize("start_path", ["/api/v2/auth/github", "/login/github"])
def test_a_provider_sign_in_waits_for_the_second_factor(client, enrolled, clock, start_path):
    _account, secret, _codes = enrolled
    response = through_github(client, start_path)
    second_step = response.headers["Location"]
    assert second_step.startswith("/login/second-factor?") and "code=" not in second_step
    assert client.get("/account").status_code == 302  # no session here either
    done = submit(client, second_step, {"code": code_at(secret, clock)})
    target, params = landing(done.headers["Location"])
    assert target == SYMBOLS_CALLBACK and params["provider"] == "github"
    assert params["state"] == "site-state"
    assert exchange(client, params["code"], "github", verifier=None).status_code == 200


def test_proving_the_password_on_the_link_page_waits_for_the_second_factor(
        app, client, make_user, clock, github_server):
    """An account whose password nobody showed to be the address holder's (one from before
    that was recorded): GitHub's sign-in stops at the link page; proving the password links
    GitHub, and the sign-in still needs the second factor."""
    account, secret, _codes = unproved_password(
        app, enrolled_user(app, make_user, clock, "octo@example.com"))
    response = through_github(client, "/login/github")
    assert response.headers["Location"] == "/login/link"
    proved = submit(client, "/login/link", {"password": account.password})
    assert proved.status_code == 302, proved.text
    assert proved.headers["Location"].startswith("/login/second-factor")
    assert client.get("/account").status_code == 302
    done = submit(client, proved.headers["Location"], {"code": code_at(secret, clock)})
    assert landing(done.headers["Location"])[0] == SYMBOLS_CALLBACK


def test_the_provider_alone_cannot_take_over_an_account_with_a_second_factor(
        app, client, make_user, clock, github_server):
    """Taking over removes the password and the other providers: with a factor on the account,
    only its owner (password and code) may, so the link page refuses and changes nothing."""
    account, _secret, _codes = unproved_password(
        app, enrolled_user(app, make_user, clock, "octo@example.com"))
    assert through_github(client, "/login/github").headers["Location"] == "/login/link"
    refused = submit(client, "/login/link/take-over", {}, token_from="/login/link")
    assert refused.status_code == 302 and "error=second_factor_first" in refused.headers["Location"]
    assert "has a second factor" in client.get(refused.headers["Location"]).text
    assert client.get("/account").status_code == 302  # no session
    assert submit(app.test_client(), "/login", {
        "email": account.email, "password": account.password}).status_code == 302  # kept
    with app.app_context():
        from app.domain.accounts import identities

        assert identities.providers_of(account.id) == []


def test_nor_an_account_whose_only_second_factor_is_a_passkey(app, client, make_user,
                                                              github_server):
    """A passkey is a second factor too: the provider alone does not take the account over."""
    account = make_user("octo@example.com", **{**OWNED, "password_proved_at": None})
    with app.app_context():
        db.session.add(Passkey(user_id=account.id, credential_key="k" * 64, credential_id=b"k",
                               public_key=b"p", sign_count=0, transports="", name="Key",
                               backup_eligible=False, backed_up=False,
                               created_at=datetime.now(UTC)))
        db.session.commit()
    assert through_github(client, "/login/github").headers["Location"] == "/login/link"
    refused = submit(client, "/login/link/take-over", {}, token_from="/login/link")
    assert refused.status_code == 302 and "error=second_factor_first" in refused.headers["Location"]
    assert submit(app.test_client(), "/login", {
        "email": account.email, "password": account.password}).headers["Location"].startswith(
        "/login/second-factor")  # the password kept, and the passkey asked for


CLIENT = ClientInfo()
SITE = HandTo("https://app.example.com/callback", "c" * 43, "state-1")


def _pending_purpose(token: str) -> Purpose:
    return db.session.get_one(PendingSignIn, tokens.hash_secret(token)).purpose


def test_each_sign_in_opens_what_its_type_says(app, make_user):
    account = make_user(**OWNED)
    with app.test_request_context():
        user = db.session.get_one(User, account.id)
        assert isinstance(sign_in.ApiSignIn(client=CLIENT).finish(user, "password"),
                          IssuedTokens)
        here = sign_in.HereSignIn(destination=ToBrowser(), client=CLIENT)
        assert isinstance(here.finish(user, "password"), BrowserSignIn)
        site = sign_in.SiteSignIn(destination=ToSite(SITE), client=CLIENT)
        opened = site.finish(user, "password")
        assert isinstance(opened, sign_in.SiteCode) and opened.provider == "password"


def test_a_kept_destination_comes_back_as_its_own_kind_of_sign_in():
    assert isinstance(sign_in.to(ToApi(), CLIENT), sign_in.ApiSignIn)
    assert isinstance(sign_in.to(ToBrowser(SITE), CLIENT), sign_in.HereSignIn)
    assert isinstance(sign_in.to(ToSite(SITE), CLIENT), sign_in.SiteSignIn)


def test_an_api_sign_in_asks_its_second_step_in_the_api_and_opens_tokens(app, make_user, clock):
    account, secret, _codes = enrolled_user(app, make_user, clock)
    with app.test_request_context():
        user = db.session.get_one(User, account.id)
        required = sign_in.ApiSignIn(client=CLIENT).finish(user, "password")
        assert isinstance(required, SecondFactorRequired)
        assert _pending_purpose(required.token) == Purpose.API
        with pytest.raises(InvalidMfaToken):  # not a pending sign-in of the hosted pages
            sign_in.complete_second_step(required.token, CLIENT,
                                         sign_in.CodeProof(code_at(secret, clock)))
        issued = sign_in.complete_api_second_step(required.token, CLIENT,
                                                  sign_in.CodeProof(code_at(secret, clock)))
        assert isinstance(issued, IssuedTokens)


def test_a_hosted_sign_in_keeps_where_it_goes_through_its_second_step(app, make_user, clock):
    account, secret, _codes = enrolled_user(app, make_user, clock)
    with app.test_request_context():
        user = db.session.get_one(User, account.id)
        site = sign_in.SiteSignIn(destination=ToSite(SITE), client=CLIENT)
        required = site.finish(user, "password")
        assert isinstance(required, SecondFactorRequired)
        assert _pending_purpose(required.token) == Purpose.HOSTED
        with pytest.raises(InvalidMfaToken):  # not an API client's
            sign_in.complete_api_second_step(required.token, CLIENT,
                                             sign_in.CodeProof(code_at(secret, clock)))
        opened = sign_in.complete_second_step(required.token, CLIENT,
                                              sign_in.CodeProof(code_at(secret, clock)))
        assert isinstance(opened, sign_in.SiteCode) and opened.provider == "password"
