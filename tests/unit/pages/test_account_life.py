"""The account page's life changes (issue 24): a new address, leaving with a typed word, the data
download; a recent sign-in stands in for the password before leaving, never before an address
change.

The closed account's page (app/pages/account_life.py `leave`): it leads back to the family
site the account page was opened from (`/account?site=<name>`), or to the service's front page."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.extensions import db
from app.models import User
from tests.support.pages import csrf_token, submit

pytestmark = pytest.mark.app_settings("pages")


def _signed_in(app, user):
    browser = app.test_client()
    submit(browser, "/login", {"email": user.email, "password": user.password})
    return browser


def test_a_recent_sign_in_alone_does_not_change_the_address(app, user, mailbox):
    """Issue 33, finding 1 (c): a session signed in a minute ago (a stolen one) must not move
    the account; the password must be given, as the API asks."""
    browser = _signed_in(app, user)
    assert 'id="email-password"' in browser.get("/account").text
    refused = submit(browser, "/account/email", {"new_email": "ada@new.example"},
                     token_from="/account")
    assert refused.status_code == 302 and mailbox.to("ada@new.example") == []
    answer = submit(browser, "/account/email", {"new_email": "ada@new.example",
                                                "password": user.password}, token_from="/account")
    assert answer.status_code == 302
    assert mailbox.to("ada@new.example")


def test_an_old_sign_in_needs_the_password(app, clock, user, mailbox):
    browser = _signed_in(app, user)
    clock.advance(app.config["STEP_UP_SECONDS"] + 60)
    refused = submit(browser, "/account/email", {"new_email": "ada@new.example"},
                     token_from="/account")
    assert "password" in browser.get("/account").text.lower()
    assert refused.status_code == 302 and mailbox.to("ada@new.example") == []
    wrong = submit(browser, "/account/email", {"new_email": "ada@new.example",
                                               "password": "not it"}, token_from="/account")
    assert wrong.status_code == 302 and mailbox.to("ada@new.example") == []
    right = submit(browser, "/account/email", {"new_email": "ada@new.example",
                                               "password": user.password}, token_from="/account")
    assert right.status_code == 302 and mailbox.to("ada@new.example")


def test_leaving_needs_the_typed_word_and_signs_out(app, user):
    browser = _signed_in(app, user)
    kept = submit(browser, "/account/delete", {"confirm_word": "yes"}, token_from="/account")
    assert kept.status_code == 302
    with app.app_context():
        assert db.session.get(User, user.id).deletion_scheduled_at is None
    left = submit(browser, "/account/delete", {"confirm_word": "delete"}, token_from="/account")
    assert left.status_code == 200 and "Your account is closed" in left.text
    with app.app_context():
        assert db.session.get(User, user.id).deletion_scheduled_at is not None
    assert browser.get("/account").status_code == 302  # signed out


def test_the_download_is_the_accounts_data(app, user):
    browser = _signed_in(app, user)
    answer = browser.get("/account/export")
    assert answer.status_code == 200
    assert "attachment" in answer.headers["Content-Disposition"]
    assert json.loads(answer.data)["profile"]["email"] == user.email
    assert _signed_in(app, user).get("/account").status_code == 200


def test_a_mailed_link_opened_by_a_scanner_changes_nothing(app, client, user, login, mailbox):
    tokens = login(user)
    client.post("/api/v2/auth/email", headers={"Authorization": f"Bearer {tokens['access_token']}"},
                json={"new_email": "ada@new.example", "password": user.password})
    link = mailbox.last_link("ada@new.example", "/email-change")
    for _ in range(3):
        assert app.test_client().get(link.split("5000", 1)[-1]).status_code == 200
    with app.app_context():
        assert db.session.get(User, user.id).email == "ada@example.com"
    forged = client.post("/email-change", data={"token": link.split("token=")[1]})
    assert forged.status_code == 400  # no CSRF token: not from our page


def test_the_change_page_names_the_account_it_moves_before_anything_changes(app, client, user,
                                                                           login, mailbox):
    tokens = login(user)
    client.post("/api/v2/auth/email", headers={"Authorization": f"Bearer {tokens['access_token']}"},
                json={"new_email": "victim@example.com", "password": user.password})
    link = mailbox.last_link("victim@example.com", "/email-change")
    page = app.test_client().get(link.split("5000", 1)[-1])
    assert "This moves the account" in page.text and user.email in page.text
    with app.app_context():
        assert db.session.get(User, user.id).email == user.email


SITES = {"symbols": {"redirect_uris": ["https://symbols.example/cb"], "origins": []},
         "outsider": {"redirect_uris": ["https://outsider.example/cb"], "origins": [],
                      "first_party": False}}


@pytest.fixture
def settings() -> dict[str, Any]:
    return {"CLIENT_SITES": SITES}


def close_account(client, user, query: str = "", headers: dict[str, str] | None = None):
    assert submit(client, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    account = client.get("/account" + query, headers=headers or {})
    action = f'action="/account/delete{query}"' if query else 'action="/account/delete"'
    assert action in account.text  # the form carries the site
    token = csrf_token(client, "/account" + query)
    left = client.post("/account/delete" + query, headers=headers or {},
                       data={"csrf_token": token, "confirm_word": "delete"})
    assert left.status_code == 200 and '<p role="status">' in left.text  # closed
    return left


def test_it_leads_back_to_the_site_the_account_page_was_opened_from(client, user):
    left = close_account(client, user, "?site=symbols")
    assert '<a class="button" href="https://symbols.example/">Back to symbols</a>' in left.text


def test_without_a_site_it_leads_to_the_front_page_in_the_pages_language(client, user):
    left = close_account(client, user, headers={"Accept-Language": "de"})
    assert '<a class="button" href="/">Zur Startseite</a>' in left.text
    assert client.get("/").status_code == 200  # signed out: the way in


@pytest.mark.parametrize("named", ["outsider", "nowhere", "https://evil.example/"])
def test_a_site_that_is_not_the_familys_is_never_linked(client, user, named):
    left = submit(client, "/login", {"email": user.email, "password": user.password})
    assert left.status_code == 302
    token = csrf_token(client, "/account")
    page = client.post("/account/delete", query_string={"site": named},
                       data={"csrf_token": token, "confirm_word": "delete"})
    assert page.status_code == 200
    assert "outsider.example" not in page.text and "evil.example" not in page.text
    assert '<a class="button" href="/">Go to the start page</a>' in page.text


def test_a_refused_closing_keeps_the_site(client, user):
    assert submit(client, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    refused = submit(client, "/account/delete?site=symbols", {"confirm_word": "no"},
                     token_from="/account?site=symbols")
    assert refused.status_code == 302 and refused.headers["Location"] == "/account?site=symbols"
