"""The OpenAPI document's models for the OpenID Connect endpoints describe what they answer."""

import pytest

from app.api import documents as out
from tests.support.oidc import (
    CONFIDENTIAL,
    PUBLIC,
    SECRET,
    authorize_query,
    get_code,
    pkce,
    redeem,
)

pytestmark = pytest.mark.app_settings("oidc")


def test_the_answers_are_the_documented_models(client, user):
    out.IssuerMetadata.model_validate(client.get("/.well-known/openid-configuration").get_json())
    out.PushedRequest.model_validate(client.post(
        "/oauth2/par", data=authorize_query(verifier=pkce())).get_json())
    verifier = pkce()
    tokens = redeem(client, get_code(client, user, authorize_query(verifier=verifier)),
                    verifier).get_json()
    out.OidcTokens.model_validate(tokens)
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    out.UserInfo.model_validate(client.get("/oauth2/userinfo", headers=bearer).get_json())
    out.UserInfo.model_validate(client.post("/oauth2/userinfo", headers=bearer).get_json())
    out.Introspection.model_validate(client.post(
        "/oauth2/introspect", data={"token": tokens["access_token"]},
        auth=(CONFIDENTIAL, SECRET)).get_json())
    out.Revoked.model_validate(client.post("/oauth2/revoke", data={
        "token": tokens["refresh_token"], "client_id": PUBLIC}).get_json())
    for refused in (client.post("/oauth2/token", data={"grant_type": "password"}),
                    client.get("/oauth2/userinfo"),
                    client.post("/oauth2/par", data={"client_id": PUBLIC}),
                    client.post("/oauth2/introspect", data={"token": "x", "client_id": PUBLIC})):
        out.OAuthError.model_validate(refused.get_json())
