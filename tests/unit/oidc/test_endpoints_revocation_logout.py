"""Revocation (RFC 7009), introspection (RFC 7662, confidential clients only) and RP-initiated
logout (issue 15, item 2), through the test client."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent
from tests.support.oidc import (
    CONFIDENTIAL,
    CONFIDENTIAL_URI,
    PUBLIC,
    PUBLIC_URI,
    SECRET,
    authorize_query,
    get_code,
    pkce,
    query_of,
    redeem,
    signed_in_tokens,
    verify_status,
)

pytestmark = pytest.mark.app_settings("oidc")

_signed_in_tokens, _verify = signed_in_tokens, verify_status


def test_revoking_a_refresh_token_ends_its_session_and_its_access_token(client, user):
    tokens = _signed_in_tokens(client, user)
    response = client.post("/oauth2/revoke", data={"token": tokens["refresh_token"],
                                                   "client_id": PUBLIC})
    assert response.status_code == 200
    assert _verify(client, tokens["access_token"]) == 401


def test_revoking_an_access_token_ends_its_session(client, user):
    tokens = _signed_in_tokens(client, user)
    assert client.post("/oauth2/revoke", data={"token": tokens["access_token"],
                                               "token_type_hint": "access_token",
                                               "client_id": PUBLIC}).status_code == 200
    assert _verify(client, tokens["access_token"]) == 401


def test_a_client_cannot_revoke_another_clients_token_and_learns_nothing(client, user):
    tokens = _signed_in_tokens(client, user)
    response = client.post("/oauth2/revoke", data={"token": tokens["refresh_token"]},
                           auth=(CONFIDENTIAL, SECRET))
    assert response.status_code == 200  # RFC 7009 §2.2: as for an unknown token
    assert _verify(client, tokens["access_token"]) == 200
    assert client.post("/oauth2/revoke", data={"token": "nonsense", "client_id": PUBLIC}
                       ).status_code == 200


def test_introspection_is_for_confidential_clients(client, user):
    tokens = _signed_in_tokens(client, user)
    public = client.post("/oauth2/introspect", data={"token": tokens["access_token"],
                                                     "client_id": PUBLIC})
    assert public.status_code == 401 and public.get_json()["error"] == "invalid_client"
    found = client.post("/oauth2/introspect", data={"token": tokens["access_token"]},
                        auth=(CONFIDENTIAL, SECRET)).get_json()
    assert found["active"] is True and found["sub"] == user.id
    assert found["client_id"] == PUBLIC and found["scope"] == "openid email profile"
    # Another client's refresh token is none of its business.
    assert client.post("/oauth2/introspect", data={"token": tokens["refresh_token"]},
                       auth=(CONFIDENTIAL, SECRET)).get_json() == {"active": False}
    client.post("/oauth2/revoke", data={"token": tokens["refresh_token"], "client_id": PUBLIC})
    assert client.post("/oauth2/introspect", data={"token": tokens["access_token"]},
                       auth=(CONFIDENTIAL, SECRET)).get_json() == {"active": False}


def test_rp_initiated_logout_ends_the_single_sign_on_and_goes_back(app, client, user):
    tokens = _signed_in_tokens(client, user)
    response = client.get("/oauth2/logout", query_string={
        "id_token_hint": tokens["id_token"], "post_logout_redirect_uri": PUBLIC_URI,
        "state": "bye"})
    assert response.status_code == 302
    assert response.headers["Location"] == f"{PUBLIC_URI}?state=bye"
    assert _verify(client, tokens["access_token"]) == 401  # the client's session ended too
    assert client.get("/account").status_code == 302  # and the browser's
    again = client.get("/oauth2/authorize", query_string=authorize_query(verifier=pkce(),
                                                                         prompt="none"))
    assert query_of(again.headers["Location"])["error"] == "login_required"
    with app.app_context():
        logouts = db.session.scalars(select(AuditEvent.event).where(
            AuditEvent.event == "logout_local")).all()
    assert len(logouts) == 1


def test_an_access_token_is_no_id_token_hint(app, client, user):
    """Access tokens are signed with the same keys: one must not end its session from anywhere."""
    tokens = _signed_in_tokens(client, user)
    stranger = app.test_client()
    response = stranger.get("/oauth2/logout", query_string={
        "id_token_hint": tokens["access_token"]})
    assert response.status_code == 400
    assert _verify(client, tokens["access_token"]) == 200


def test_an_id_token_hint_from_another_browser_ends_nothing(app, client, user):
    """A client (a third-party one, say) holds its users' ID tokens: it cannot sign them out
    of the service and every other site from a browser that is not theirs."""
    tokens = _signed_in_tokens(client, user)
    stranger = app.test_client()
    response = stranger.get("/oauth2/logout", query_string={
        "id_token_hint": tokens["id_token"], "post_logout_redirect_uri": PUBLIC_URI})
    assert response.status_code in (200, 302)
    assert _verify(client, tokens["access_token"]) == 200
    assert client.get("/account").status_code == 200


def test_logout_redirects_only_to_a_registered_post_logout_uri(client, user):
    verifier = None
    query = authorize_query(client_id=CONFIDENTIAL, redirect_uri=CONFIDENTIAL_URI)
    code = get_code(client, user, query)
    tokens = redeem(client, code, verifier, CONFIDENTIAL, CONFIDENTIAL_URI,
                    auth=(CONFIDENTIAL, SECRET)).get_json()
    # The confidential client registered its own post-logout URI: its redirect URI is not one.
    response = client.get("/oauth2/logout", query_string={
        "id_token_hint": tokens["id_token"], "post_logout_redirect_uri": CONFIDENTIAL_URI})
    assert response.status_code == 200 and "Location" not in response.headers
    assert "signed out" in response.text


def test_logout_without_an_id_token_hint_asks_first(client, user):
    _signed_in_tokens(client, user)
    response = client.get("/oauth2/logout", query_string={
        "post_logout_redirect_uri": PUBLIC_URI, "client_id": PUBLIC})
    assert response.status_code == 200 and "Location" not in response.headers
    assert 'action="/logout"' in response.text and "csrf_token" in response.text
    assert client.get("/account").status_code == 200  # nothing happened yet
