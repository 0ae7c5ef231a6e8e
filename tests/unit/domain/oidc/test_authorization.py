"""A third-party client site (issue 15, item 1): the consent page, remembered per scope."""

from __future__ import annotations

import re

import pytest

from app.extensions import db
from app.models import ConsentGrant
from tests.support.oidc import authorize_query, pkce, query_of
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("oidc")

OUTSIDER = {"client_id": "outsider", "redirect_uri": "https://outsider.example/cb"}


def _ask(client, **extra):
    return client.get("/oauth2/authorize", query_string=authorize_query(
        verifier=pkce(), **OUTSIDER, **extra))


def _answer(client, page, decision, csrf=True):
    action = re.search(r'<form id="consent" method="post" action="([^"]+)"', page.text).group(1)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    data = {"decision": decision, **({"csrf_token": token} if csrf else {})}
    return client.post(action.replace("&amp;", "&"), data=data)


def test_a_third_party_site_asks_once_and_the_answer_is_remembered(app, client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    page = _ask(client)
    assert page.status_code == 200 and "outsider" in page.text and user.email in page.text
    assert "csrf_token" in page.text
    allowed = _answer(client, page, "allow")
    assert allowed.status_code == 302 and "code" in query_of(allowed.headers["Location"])
    with app.app_context():
        assert db.session.get(ConsentGrant, (user.id, "outsider")).scope == \
            "openid email profile"
    again = _ask(client)
    assert again.status_code == 302 and "code" in query_of(again.headers["Location"])
    assert _ask(client, prompt="consent").status_code == 200  # asked again on request


def test_cancelling_answers_access_denied_and_prompt_none_consent_required(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    assert query_of(_ask(client, prompt="none").headers["Location"])["error"] == \
        "consent_required"
    denied = _answer(client, _ask(client), "deny")
    back = query_of(denied.headers["Location"])
    assert back["error"] == "access_denied" and back["state"] == "st-1" and "code" not in back


def test_a_consent_without_its_csrf_token_is_refused(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    forged = _answer(client, _ask(client), "allow", csrf=False)
    assert forged.status_code == 400 and "Location" not in forged.headers


def test_a_wider_scope_asks_again(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    _answer(client, _ask(client, scope="openid"), "allow")
    assert _ask(client, scope="openid").status_code == 302
    assert _ask(client, scope="openid email").status_code == 200
