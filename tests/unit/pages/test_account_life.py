"""The closed account's page (app/pages/account_life.py `leave`): it leads back to the family
site the account page was opened from (`/account?site=<name>`), or to the service's front page."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.pages import csrf_token, submit

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
