"""A client site's sign-out through the hosted pages (GET /logout, the kit's `signOut()`): the
browser session it was signed in through ends with it, so the next sign-in asks; any other page
that sends a person here only gets a question, never a silent sign-out."""

from urllib.parse import parse_qs, urlsplit

import jwt
import pytest

from tests.support.pages import submit
from tests.support.sites import FOOTPRINTS, PAGE_SITES, SYMBOLS

pytestmark = pytest.mark.app_settings("pages")


@pytest.fixture
def settings():
    sites = {**PAGE_SITES, "symbols": {**PAGE_SITES["symbols"],
                                       "home_url": "https://symbols.example/"}}
    return {"CLIENT_SITES": sites}


def _site_sign_in(client, user, callback="symbols"):
    """Sign in on the hosted page for a site and redeem its code: the site's tokens."""
    response = submit(client, f"/login?callback={callback}&state=s1",
                      {"email": user.email, "password": user.password})
    location = urlsplit(response.headers["Location"])
    code = parse_qs(location.query)["code"][0]
    tokens = client.post("/api/v2/auth/exchange-code",
                         json={"code": code, "provider": "password"}).get_json()
    return tokens


def _site_logout(client, tokens):
    assert client.post("/api/v2/auth/logout", headers={
        "Authorization": f"Bearer {tokens['access_token']}"}).status_code == 204
    return jwt.decode(tokens["access_token"], options={"verify_signature": False})["sid"]


def _asks_for_a_password(client):
    return client.get("/login?callback=symbols").status_code == 200


def test_a_sites_ended_session_ends_the_browser_session_it_came_through(client, user):
    tokens = _site_sign_in(client, user)
    assert client.get("/login?callback=symbols").status_code == 302  # single sign-on, silently
    sid = _site_logout(client, tokens)
    response = client.get(f"/logout?callback=symbols&sid={sid}")
    assert response.status_code == 302 and response.headers["Location"] == "https://symbols.example/"
    assert _asks_for_a_password(client)
    assert client.get("/account").status_code == 302  # the hosted session is over


def test_a_named_redirect_uri_is_where_it_comes_back(client, user):
    sid = _site_logout(client, _site_sign_in(client, user))
    response = client.get(f"/logout?redirect_uri={SYMBOLS}&sid={sid}")
    assert response.headers["Location"] == SYMBOLS


def test_a_live_site_session_does_not_end_the_browser_session(client, user):
    tokens = _site_sign_in(client, user)
    sid = jwt.decode(tokens["access_token"], options={"verify_signature": False})["sid"]
    response = client.get(f"/logout?callback=symbols&sid={sid}")
    assert response.status_code == 200 and b"Sign out" in response.data  # asked first
    assert client.get("/account").status_code == 200


@pytest.mark.parametrize("sid", ["", "not-an-id", "\x00", "x" * 5000,
                                 "00000000-0000-4000-8000-000000000000"])
def test_without_the_sites_session_id_the_person_is_asked(client, user, sid):
    _site_logout(client, _site_sign_in(client, user))
    response = client.get("/logout", query_string={"callback": "symbols", "sid": sid})
    assert response.status_code == 200
    assert client.get("/account").status_code == 200  # nothing ended by a link alone


def test_another_browsers_session_cannot_sign_this_one_out(app, user):
    elsewhere, here = app.test_client(), app.test_client()
    sid = _site_logout(elsewhere, _site_sign_in(elsewhere, user))
    _site_sign_in(here, user)
    here.get(f"/logout?callback=symbols&sid={sid}")
    assert here.get("/account").status_code == 200


def test_the_question_signs_out_by_a_form_and_comes_back(client, user):
    _site_sign_in(client, user)
    page = client.get("/logout?callback=symbols")
    assert page.status_code == 200
    assert client.post("/logout?callback=symbols").status_code == 400  # no CSRF token: refused
    response = submit(client, "/logout?callback=symbols", {}, token_from="/logout?callback=symbols")
    assert response.headers["Location"] == "https://symbols.example/"
    assert _asks_for_a_password(client)


def test_signed_out_already_goes_straight_back(client):
    response = client.get("/logout?callback=footprints")
    assert response.status_code == 302 and response.headers["Location"] == "https://footprints.example/"


@pytest.mark.parametrize("query", ["", "callback=nobody", "redirect_uri=https://evil.example/cb",
                                   f"redirect_uri={FOOTPRINTS}x"])
def test_an_unregistered_destination_is_refused(client, query):
    response = client.get(f"/logout?{query}")
    assert response.status_code == 400 and "Location" not in response.headers


def test_the_hosted_sign_out_button_leaves_the_sites_own_session(client, user):
    tokens = _site_sign_in(client, user)
    submit(client, "/logout", {}, token_from="/account")
    assert client.get("/account").status_code == 302
    assert client.get("/api/v2/auth/verify", headers={
        "Authorization": f"Bearer {tokens['access_token']}"}).status_code == 200
