"""app/domain/sign_in.py: each kind of sign-in opens what its type says, and asks an account's
second step where its client can answer it."""

from __future__ import annotations

import pytest

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
from app.models import PendingSignIn, User
from tests.support.accounts import OWNED
from tests.support.second_factors import code_at, enrolled_user

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
