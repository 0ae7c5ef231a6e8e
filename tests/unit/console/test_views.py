"""The support console (issue 23): operators only (404 to everyone else), a second factor, a
recent sign-in or a fresh code for any change, CSRF and a confirmation on every change, each
audited with the operator as the actor; and no secret on any page."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.extensions import db
from app.models import AuditEvent, TotpFactor, User
from tests.support.pages import submit
from tests.support.second_factors import code_at, enrolled_user

CLI = ClientInfo(actor="cli")


def _make_operator(app, email):
    with app.app_context():
        actions.set_operator(directory.require_by_email(email), CLI, operator=True)


@pytest.fixture
def operator(app, make_user, clock):
    """An operator with an authenticator app, signed in with the hosted pages just now."""
    account, secret, _codes = enrolled_user(app, make_user, clock, "op@example.com")
    _make_operator(app, account.email)
    browser = app.test_client()
    submit(browser, "/login", {"email": account.email, "password": account.password})
    answer = submit(browser, "/login/second-factor", {"code": code_at(secret, clock)},
                    token_from="/login")
    assert answer.status_code in (200, 302), answer.text
    clock.advance(30)
    return browser, account, secret


PATHS = ["/admin", "/admin/", "/admin/users/{id}", "/admin/users/{id}/disable",
         "/admin/users/{id}/nonsense", "/admin/anything"]


def test_everyone_but_an_operator_gets_the_plain_404(app, client, user, make_user):
    other = make_user("mallory@example.com")
    signed_in = app.test_client()
    submit(signed_in, "/login", {"email": other.email, "password": other.password})
    plain_404 = client.get("/no-such-page")
    for browser in (client, signed_in):
        for path in PATHS:
            for method in ("get", "post"):
                answer = getattr(browser, method)(path.format(id=user.id))
                assert answer.status_code == 404, (path, method)
                assert "<h1>There is nothing here</h1>" in answer.text
                assert "console" not in answer.text.lower()
    assert plain_404.status_code == 404
    with app.app_context():
        assert db.session.get(User, user.id).disabled_at is None


def test_an_operator_without_a_second_factor_is_refused(app, make_user):
    account = make_user("op@example.com")
    _make_operator(app, account.email)
    browser = app.test_client()
    submit(browser, "/login", {"email": account.email, "password": account.password})
    answer = browser.get("/admin/")
    assert answer.status_code == 403
    assert "second factor" in answer.text


def test_an_operator_disables_an_account_after_confirming(app, client, user, login,
                                                          operator):
    browser, op, _secret = operator
    tokens = login(user)
    found = browser.get("/admin/", query_string={"email": "ada"})
    assert user.email in found.text
    page = browser.get(f"/admin/users/{user.id}")
    assert page.status_code == 200 and "Disable this account" in page.text
    confirmation = browser.get(f"/admin/users/{user.id}/disable")
    assert "every session ends at once" in confirmation.text
    with app.app_context():
        assert db.session.get(User, user.id).disabled_at is None  # a GET changes nothing
    done = submit(browser, f"/admin/users/{user.id}/disable", {})
    assert done.status_code == 302
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": tokens["refresh_token"]}).status_code == 401
    with app.app_context():
        op_id = directory.require_by_email(op.email).id
        events = db.session.scalars(select(AuditEvent).where(
            AuditEvent.user_id == user.id, AuditEvent.event == "account_disabled")).all()
        assert [e.actor for e in events] == [f"operator:{op_id}"]
    shown = browser.get(f"/admin/users/{user.id}")
    assert f"account_disabled · by {op.email} (operator:{op_id})" in shown.text


def test_a_change_without_the_csrf_token_changes_nothing(app, user, operator):
    browser, _op, _secret = operator
    answer = browser.post(f"/admin/users/{user.id}/disable", data={})
    assert answer.status_code == 400
    with app.app_context():
        assert db.session.get(User, user.id).disabled_at is None


def test_an_old_sign_in_needs_a_fresh_code(app, clock, user, operator):
    browser, _op, secret = operator
    clock.advance(app.config["STEP_UP_SECONDS"] + 60)
    refused = submit(browser, f"/admin/users/{user.id}/edit", {"plan": "pro"})
    assert refused.status_code == 200 and "fresh code" in refused.text
    wrong = submit(browser, f"/admin/users/{user.id}/edit", {"plan": "pro", "code": "000000"})
    assert wrong.status_code == 200
    with app.app_context():
        assert db.session.get(User, user.id).plan == "free"
    done = submit(browser, f"/admin/users/{user.id}/edit",
                  {"plan": "pro", "code": code_at(secret, clock)})
    assert done.status_code == 302
    with app.app_context():
        assert db.session.get(User, user.id).plan == "pro"


def test_a_bad_plan_is_said_on_the_form_and_changes_nothing(app, user, operator):
    browser, _op, _secret = operator
    answer = submit(browser, f"/admin/users/{user.id}/edit", {"plan": "Gold Plan!"})
    assert answer.status_code == 200 and "A plan is up to 32" in answer.text
    with app.app_context():
        assert db.session.get(User, user.id).plan == "free"


def test_no_page_shows_a_secret(app, clock, make_user, operator):
    browser, _op, _secret = operator
    target, secret, codes = enrolled_user(app, make_user, clock, "target@example.com")
    with app.app_context():
        user = directory.require_by_email(target.email)
        password_hash = user.password_hash
        totp_secret = db.session.get(TotpFactor, user.id).secret
    pages = [browser.get(f"/admin/users/{user.id}").text, browser.get("/admin/").text]
    pages += [browser.get(f"/admin/users/{user.id}/{change}").text
              for change in ("disable", "edit", "clear-factors", "password-reset")]
    for text in pages:
        assert password_hash not in text and totp_secret not in text and secret not in text
        assert not any(code in text for code in codes)


@pytest.mark.parametrize("query", [{"email": "a\x00b"}, {"plan": "\x00"}, {"cursor": "\x00"}])
def test_a_hostile_search_is_refused_in_words(operator, query):
    browser, _op, _secret = operator
    answer = browser.get("/admin/", query_string=query)
    assert answer.status_code == 422


def test_a_hostile_logo_name_is_a_404(client):
    assert client.get("/sites/a%00b/logo").status_code == 404
