"""RP-initiated logout asks unless its id_token_hint is an ID token of this browser's current
session (issue 33, finding 5): the ID token of an ended session, another person's, or a
back-channel logout token never signs the browser out unasked, through GET or POST; the question's
button, CSRF-checked, does."""

from __future__ import annotations

from urllib.parse import urlencode

import jwt
import pytest

from app.domain.oidc import backchannel
from tests.support.oidc import PUBLIC, PUBLIC_URI, signed_in_tokens
from tests.support.oidc import verify_status as verify
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("oidc")


def end_session(client, method, **params):
    if method == "GET":
        return client.get("/oauth2/logout", query_string=params)
    return client.post("/oauth2/logout", data=params)


def asked(response):
    return (response.status_code == 200 and "Location" not in response.headers
            and 'action="/logout"' in response.text and 'name="csrf_token"' in response.text)


def still_signed_in(client, tokens):
    return client.get("/account").status_code == 200 and verify(client,
                                                               tokens["access_token"]) == 200


@pytest.fixture
def ended_then_signed_in_again(client, user):
    """The tokens of a sign-in that ended (its ID token still verifies: no `exp` check for a
    hint), and of the sign-in this browser holds now."""
    ended = signed_in_tokens(client, user)
    assert end_session(client, "GET", id_token_hint=ended["id_token"]).status_code == 200
    assert client.get("/account").status_code == 302
    return ended, signed_in_tokens(client, user)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_the_id_token_of_an_ended_session_asks_first(client, ended_then_signed_in_again,
                                                     method):
    ended, current = ended_then_signed_in_again
    response = end_session(client, method, id_token_hint=ended["id_token"],
                           post_logout_redirect_uri=PUBLIC_URI, state="bye")
    assert asked(response)
    assert still_signed_in(client, current)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_logout_token_is_no_id_token_hint(app, client, user, method):
    tokens = signed_in_tokens(client, user)
    sid = jwt.decode(tokens["id_token"], options={"verify_signature": False})["sid"]
    with app.app_context():  # what the client's back-channel endpoint received
        logout_token = backchannel.logout_token(PUBLIC, user.id, sid, "jti-1")
    response = end_session(client, method, id_token_hint=logout_token,
                           post_logout_redirect_uri=PUBLIC_URI)
    assert response.status_code == 400 and "Location" not in response.headers
    assert still_signed_in(client, tokens)


def test_another_persons_id_token_asks_first(app, client, user, make_user):
    other = make_user("grace@example.com")
    theirs = signed_in_tokens(app.test_client(), other)
    mine = signed_in_tokens(client, user)
    assert asked(end_session(client, "GET", id_token_hint=theirs["id_token"]))
    assert still_signed_in(client, mine)


def test_the_current_sessions_id_token_goes_unasked(client, user):
    tokens = signed_in_tokens(client, user)
    response = end_session(client, "GET", id_token_hint=tokens["id_token"],
                           post_logout_redirect_uri=PUBLIC_URI, state="bye")
    assert response.status_code == 302 and response.headers["Location"] == f"{PUBLIC_URI}?state=bye"
    assert client.get("/account").status_code == 302
    assert verify(client, tokens["access_token"]) == 401


def test_the_questions_button_signs_out_with_its_csrf_token_only(client,
                                                                 ended_then_signed_in_again):
    ended, current = ended_then_signed_in_again
    page = "/oauth2/logout?" + urlencode({"id_token_hint": ended["id_token"]})
    assert client.post("/logout").status_code == 400  # no CSRF token: refused
    assert still_signed_in(client, current)
    assert submit(client, "/logout", {}, token_from=page).status_code == 302
    assert client.get("/account").status_code == 302  # the browser session is over
