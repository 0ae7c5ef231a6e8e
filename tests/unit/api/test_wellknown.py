"""The discovery document (issue 15, "Done when"): OpenID Connect Discovery 1.0's required fields,
and nothing in it that is not true."""

from urllib.parse import urlsplit

import jwt
import pytest
from werkzeug.exceptions import MethodNotAllowed, NotFound

from tests.support.oidc import authorize_query, get_code, pkce, redeem

pytestmark = pytest.mark.app_settings("oidc")

# OpenID Connect Discovery 1.0 §3: REQUIRED (token_endpoint too, without the implicit flow).
REQUIRED = ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri",
            "response_types_supported", "subject_types_supported",
            "id_token_signing_alg_values_supported")


def test_the_discovery_document_has_every_required_field(app, client):
    metadata = client.get("/.well-known/openid-configuration").get_json()
    assert all(metadata.get(name) for name in REQUIRED), \
        [name for name in REQUIRED if not metadata.get(name)]
    assert metadata["issuer"] == app.config["PUBLIC_URL"]
    assert metadata["userinfo_endpoint"]  # RECOMMENDED
    assert "openid" in metadata["scopes_supported"]


def test_every_endpoint_it_names_is_served_with_the_method_it_needs(app, client):
    metadata = client.get("/.well-known/openid-configuration").get_json()
    methods = {"authorization_endpoint": "GET", "token_endpoint": "POST",
               "userinfo_endpoint": "GET", "revocation_endpoint": "POST",
               "introspection_endpoint": "POST", "end_session_endpoint": "GET",
               "pushed_authorization_request_endpoint": "POST", "jwks_uri": "GET"}
    adapter = app.url_map.bind("127.0.0.1:5000")
    for name, method in methods.items():
        url = metadata[name]
        assert url.startswith(metadata["issuer"] + "/"), name
        try:
            adapter.match(urlsplit(url).path, method=method)
        except (NotFound, MethodNotAllowed):
            raise AssertionError(f"{name} {url} is not served for {method}") from None
    assert "exchange-code" not in metadata["token_endpoint"]  # the handoff is not OAuth's


def test_it_claims_only_what_the_provider_does(client):
    metadata = client.get("/.well-known/openid-configuration").get_json()
    jwks = client.get("/.well-known/jwks.json").get_json()
    assert metadata["id_token_signing_alg_values_supported"] == [jwks["keys"][0]["alg"]]
    assert metadata["response_types_supported"] == ["code"]
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert set(metadata["grant_types_supported"]) == {"authorization_code", "refresh_token",
                                                      "client_credentials"}
    assert metadata["request_parameter_supported"] is False
    assert metadata["request_uri_parameter_supported"] is False
    assert metadata["require_pushed_authorization_requests"] is False


def test_claims_supported_are_exactly_those_an_id_token_and_userinfo_carry(app, client, user):
    """With every scope and a nonce: nothing listed that is never issued, nothing issued that is
    not listed; acr says one of acr_values_supported (aal2 with a second factor:
    tests/unit/web/test_pending_authorization.py)."""
    metadata = client.get("/.well-known/openid-configuration").get_json()
    verifier = pkce()
    code = get_code(client, user, authorize_query(verifier=verifier))
    tokens = redeem(client, code, verifier).get_json()
    id_claims = jwt.decode(tokens["id_token"], options={"verify_signature": False})
    userinfo = client.get("/oauth2/userinfo", headers={
        "Authorization": f"Bearer {tokens['access_token']}"}).get_json()
    assert sorted(metadata["claims_supported"]) == sorted({*id_claims, *userinfo})
    assert metadata["acr_values_supported"] == ["aal1", "aal2"]
    assert id_claims["acr"] == "aal1"
    assert metadata["claims_parameter_supported"] is False
    assert metadata["response_modes_supported"] == ["query"]
    assert "offline_access" in metadata["scopes_supported"]
