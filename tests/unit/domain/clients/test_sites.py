"""A third-party client gets what the person consented to, through every door, and nothing more.

The handoff (a code through `redirect_uri`/`callback`, traded at exchange-code) is the family's
own public sites' way in: a third-party client, or a confidential one, that names its registered
redirect URI there gets no code. And a third-party client's access token is for it alone: its
audience is its client id, so the family API, /verify and the Python helper refuse it, while
userinfo answers it with the consented claims only.
"""

from __future__ import annotations

import re

import pytest

from app.domain.clients import registration
from app.domain.sessions import handoff
from app.extensions import db
from app.models import User
from tests.support.http import bearer
from tests.support.oidc import (
    CONFIDENTIAL,
    CONFIDENTIAL_URI,
    PUBLIC_URI,
    SECRET,
    SITES,
    authorize_query,
    client_post,
    get_code,
    pkce,
    redeem,
)
from tests.support.pages import submit
from tests.support.rows import handoff_codes as _codes
from tests.support.sites import PROVIDERS

pytestmark = pytest.mark.app_settings("oidc")

OUTSIDER, OUTSIDER_URI, OUTSIDER_ORIGIN = "outsider", "https://outsider.example/cb", \
    "https://outsider.example"
LEDGER_ORIGIN = "https://ledger.example"


@pytest.fixture
def settings():
    with_origins = {**SITES,
                    OUTSIDER: {**SITES[OUTSIDER], "origins": [OUTSIDER_ORIGIN]},
                    CONFIDENTIAL: {**SITES[CONFIDENTIAL], "origins": [LEDGER_ORIGIN]}}
    return {"CLIENT_SITES": with_origins, **PROVIDERS}


def _signed_in(client, user) -> None:
    assert submit(client, "/login", {"email": user.email, "password": user.password}) \
        .status_code == 302


# The handoff's doors ---------------------------------------------------------------------------

NOT_A_HANDOFF_SITE = [(OUTSIDER, OUTSIDER_URI), (CONFIDENTIAL, CONFIDENTIAL_URI)]


@pytest.mark.parametrize(("name", "uri"), NOT_A_HANDOFF_SITE)
@pytest.mark.parametrize("page", ["/login", "/signup"])
def test_a_signed_in_visitor_is_not_handed_to_such_a_site_by_the_pages(app, client, user, name,
                                                                       uri, page):
    _signed_in(client, user)
    for query in ({"redirect_uri": uri}, {"callback": name}):
        response = client.get(page, query_string=query)
        assert response.status_code == 400, (query, response.status_code)
        assert "Location" not in response.headers
    assert _codes(app) == 0


@pytest.mark.parametrize(("name", "uri"), NOT_A_HANDOFF_SITE)
def test_a_password_sign_in_on_the_page_gives_such_a_site_no_code(app, client, user, name, uri):
    refused = submit(client, f"/login?redirect_uri={uri}",
                     {"email": user.email, "password": user.password}, token_from="/login")
    assert refused.status_code == 400 and "Location" not in refused.headers
    assert _codes(app) == 0


@pytest.mark.parametrize(("name", "uri"), NOT_A_HANDOFF_SITE)
def test_the_api_provider_starts_refuse_such_a_site(client, name, uri):
    v2 = client.get("/api/v2/auth/github", query_string={"redirect_uri": uri})
    assert v2.status_code == 400 and v2.get_json()["code"] == "invalid_redirect_uri"
    v1 = client.get("/api/v1/auth/github/login", query_string={"callback": name})
    assert v1.status_code == 400 and "Location" not in v1.headers


def test_the_familys_public_site_still_gets_its_code(app, client, user):
    _signed_in(client, user)
    back = client.get("/login", query_string={"redirect_uri": PUBLIC_URI, "state": "s-1"})
    assert back.status_code == 302 and back.headers["Location"].startswith(PUBLIC_URI + "?code=")


def test_a_code_is_refused_and_burned_when_its_site_no_longer_uses_the_handoff(app, client,
                                                                             user):
    """A code is bound to its site: one that became a third-party client meanwhile (the CLI
    changed it) cannot trade a code issued while it was the family's."""
    uri = "https://later.example/cb"
    with app.app_context():
        registration.add_site("later", [uri], [])
        raw = handoff.issue_code(db.session.get(User, user.id), "password", handoff.HandTo(uri))
        db.session.commit()
        registration.update_site("later", registration.Changes(first_party=False))
    body = {"code": raw, "provider": "password"}
    assert client.post("/api/v2/auth/exchange-code", json=body).status_code == 401
    with app.app_context():
        registration.update_site("later", registration.Changes(first_party=True))
    assert client.post("/api/v2/auth/exchange-code", json=body).status_code == 401  # burned


def test_a_uri_another_kind_of_site_registered_too_is_no_handoffs(app, client):
    with app.app_context():
        registration.add_site("copycat", [PUBLIC_URI], [],
                              registration.Registration(first_party=False))
    response = client.get("/api/v2/auth/github", query_string={"redirect_uri": PUBLIC_URI})
    assert response.status_code == 400


def _fresh_code(app, user) -> str:
    with app.app_context():
        raw = handoff.issue_code(db.session.get(User, user.id), "password",
                                 handoff.HandTo(PUBLIC_URI))
        db.session.commit()
        return raw


CORRECTED = {"provider": "password", "redirect_uri": PUBLIC_URI}


@pytest.mark.parametrize("field", ["provider", "redirect_uri"])
@pytest.mark.parametrize("wrong", ["pässword", "é" * 30, "https://symbols.example/ä"])
def test_exchange_code_with_wrong_text_is_a_401_and_burns_the_code(app, client, user, field,
                                                                   wrong):
    raw = _fresh_code(app, user)
    refused = client.post("/api/v2/auth/exchange-code",
                          json={"code": raw, **CORRECTED, field: wrong})
    assert refused.status_code == 401 and refused.get_json()["code"] == "invalid_code"
    retried = client.post("/api/v2/auth/exchange-code", json={"code": raw, **CORRECTED})
    assert retried.status_code == 401


@pytest.mark.parametrize("field", ["provider", "redirect_uri"])
@pytest.mark.parametrize("malformed", [r"\u0000", r"\ud800", r"a\u0007b"])
def test_exchange_code_with_a_malformed_body_is_a_422_and_burns_nothing(app, client, user, field,
                                                                        malformed):
    """The body is refused before any code is looked at; the redemption that follows works."""
    raw = _fresh_code(app, user)
    body = f'{{"code": "{raw}", "provider": "password", "{field}": "{malformed}"}}'
    if field == "provider":
        body = body.replace('"provider": "password", ', "")
    refused = client.post("/api/v2/auth/exchange-code", data=body,
                          content_type="application/json")
    assert refused.status_code == 422, refused.text
    retried = client.post("/api/v2/auth/exchange-code", json={"code": raw, **CORRECTED})
    assert retried.status_code == 200


def test_the_family_api_gives_cors_to_the_familys_own_origins_only(client):
    for origin, allowed in ((OUTSIDER_ORIGIN, False), (LEDGER_ORIGIN, True)):
        response = client.get("/api/v2/auth/verify", headers={"Origin": origin})
        assert ("Access-Control-Allow-Origin" in response.headers) is allowed, origin


# A third-party client's name on our pages ----------------------------------------------------

@pytest.mark.parametrize("query", [f"site={OUTSIDER}", f"client_id={OUTSIDER}"])
@pytest.mark.parametrize("path", ["/login", "/signup", "/forgot-password", "/reset-password"])
def test_a_link_anyone_can_write_shows_no_third_partys_name_on_our_pages(client, path, query):
    # Signed in there, a person goes to their account, not to the third party: "Continue to"
    # it, its logo and a way to it would lend it the family's page.
    page = client.get(f"{path}?{query}")
    assert page.status_code < 500 and "Continue to" not in page.text
    assert 'href="https://outsider.example/"' not in page.text


def test_its_own_authorization_still_names_it(client):
    started = client.get("/oauth2/authorize", query_string=authorize_query(
        client_id=OUTSIDER, redirect_uri=OUTSIDER_URI, verifier=pkce()))
    assert started.status_code == 302
    assert "Sign in to continue to outsider" in client.get(started.headers["Location"]).text


# A third-party client's tokens ---------------------------------------------------------------

def _consented_tokens(client, user, scope: str) -> dict:
    verifier = pkce()
    query = authorize_query(verifier=verifier, client_id=OUTSIDER, redirect_uri=OUTSIDER_URI,
                            scope=scope)
    _signed_in(client, user)
    page = client.get("/oauth2/authorize", query_string=query)
    assert page.status_code == 200, page.text
    action = re.search(r'<form id="consent" method="post" action="([^"]+)"', page.text).group(1)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    back = client.post(action.replace("&amp;", "&"),
                       data={"decision": "allow", "csrf_token": token})
    code = re.search(r"code=([^&]+)", back.headers["Location"]).group(1)
    issued = redeem(client, code, verifier, client_id=OUTSIDER, redirect_uri=OUTSIDER_URI)
    assert issued.status_code == 200, issued.text
    return issued.get_json()


def _claims(token: str) -> dict:
    import jwt
    return jwt.decode(token, options={"verify_signature": False})


def test_a_third_party_token_is_for_that_client_alone(app, client, user):
    tokens = _consented_tokens(client, user, "openid")
    claims = _claims(tokens["access_token"])
    assert claims["aud"] == OUTSIDER and claims["client_id"] == OUTSIDER
    assert claims["scope"] == "openid"
    access = bearer(tokens["access_token"])
    assert client.get("/api/v2/auth/verify", headers=access).status_code == 401
    assert client.delete("/api/v2/auth/providers/github", headers=access).status_code == 401
    assert client.post("/api/v2/auth/logout", headers=access,
                       json={"scope": "global"}).status_code == 401
    info = client.get("/oauth2/userinfo", headers=access)
    assert info.status_code == 200 and info.get_json() == {"sub": user.id}  # openid alone


def test_its_refreshed_token_and_introspection_keep_its_audience(app, client, user):
    tokens = _consented_tokens(client, user, "openid email")
    refreshed = client.post("/oauth2/token", data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
        "client_id": OUTSIDER})
    assert refreshed.status_code == 200, refreshed.text
    fresh = refreshed.get_json()["access_token"]
    assert _claims(fresh)["aud"] == OUTSIDER
    assert client.get("/api/v2/auth/verify", headers=bearer(fresh)).status_code == 401
    info = client.get("/oauth2/userinfo", headers=bearer(fresh)).get_json()
    assert set(info) == {"sub", "email", "email_verified"}
    seen = client_post(client, "/oauth2/introspect", {"token": fresh}, (CONFIDENTIAL, SECRET))
    assert seen.get_json()["active"] is True and seen.get_json()["aud"] == OUTSIDER


def test_a_family_sites_openid_connect_token_is_still_a_family_token(app, client, user):
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    tokens = redeem(client, code, verifier).get_json()
    assert _claims(tokens["access_token"])["aud"] == app.config["JWT_AUDIENCE"]
    verified = client.get("/api/v2/auth/verify", headers=bearer(tokens["access_token"]))
    assert verified.status_code == 200


def test_the_python_helper_refuses_a_third_party_token(app, client, user):
    import tests.support.client_kit  # noqa: F401, I001 (puts the helper on the path first)
    from svc_auth_client import InvalidToken, TokenVerifier

    tokens = _consented_tokens(client, user, "openid")
    jwks = client.get("/.well-known/jwks.json").get_json()
    verifier = TokenVerifier("https://unused.example/jwks", issuer=app.config["PUBLIC_URL"],
                             audience=app.config["JWT_AUDIENCE"], fetch=lambda _url, _timeout: jwks)
    family = client.post("/api/v2/auth/login",
                         json={"email": user.email, "password": user.password}).get_json()
    assert verifier.verify(family["access_token"])["sub"] == user.id
    with pytest.raises(InvalidToken):
        verifier.verify(tokens["access_token"])


@pytest.mark.parametrize("reserved", ["svc", "svc-admin"])
def test_no_site_is_named_like_the_services_own_audiences(app, reserved):
    from app.domain.errors import InvalidBody

    with app.app_context(), pytest.raises(InvalidBody):
        registration.add_site(reserved, ["https://x.example/cb"], [],
                       registration.Registration(first_party=False))
    with pytest.raises(RuntimeError):
        registration.check_settings({reserved: {"redirect_uris": ["https://x.example/cb"]}},
                             reserved=("svc", "svc-admin"))
