"""client_credentials (issue 15, item 2): a confidential client's own token, for the admin API
to come, that no client site can take for a person's."""

import jwt
import pytest

from app.api import documents as out
from tests.support.oidc import CONFIDENTIAL, PUBLIC, SECRET

pytestmark = pytest.mark.app_settings("oidc")


def test_a_confidential_client_gets_a_token_of_its_own_with_the_admin_audience(app, client):
    response = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                           auth=(CONFIDENTIAL, SECRET))
    assert response.status_code == 200, response.text
    body = out.OidcTokens.model_validate(response.get_json())
    assert body.refresh_token is None and body.scope == ""
    jwks = client.get("/.well-known/jwks.json").get_json()
    key = jwt.PyJWK(jwks["keys"][0])
    claims = jwt.decode(body.access_token, key.key, algorithms=[key.algorithm_name],
                        audience="svc-admin", issuer=app.config["PUBLIC_URL"])
    assert claims["sub"] == CONFIDENTIAL == claims["client_id"] and "sid" not in claims
    # Not a person's token: the shared audience's checks refuse it.
    verified = client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {body.access_token}"})
    assert verified.status_code == 401


def test_only_a_confidential_client_with_its_secret_and_no_scope(client):
    public = client.post("/oauth2/token", data={"grant_type": "client_credentials",
                                                "client_id": PUBLIC})
    assert public.status_code in (400, 401)
    assert public.get_json()["error"] in ("invalid_client", "unauthorized_client")
    wrong = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                        auth=(CONFIDENTIAL, "not-it"))
    assert wrong.status_code == 401 and wrong.get_json()["error"] == "invalid_client"
    scoped = client.post("/oauth2/token", data={"grant_type": "client_credentials",
                                                "scope": "openid"}, auth=(CONFIDENTIAL, SECRET))
    assert scoped.get_json()["error"] == "invalid_scope"


def test_the_admin_audience_may_not_be_the_shared_one(tmp_path):
    import pytest

    from app import create_app
    with pytest.raises(RuntimeError, match="SVC_ADMIN_AUDIENCE"):
        create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                    "SQLALCHEMY_DATABASE_URI": "sqlite://", "ADMIN_AUDIENCE": "svc"})
