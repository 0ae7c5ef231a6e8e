"""GET /api/v2/auth/verify and POST /api/v2/auth/logout with its three scopes."""

import pytest

from tests.support.http import bearer


def logout(client, access_token, scope=None):
    query = f"?scope={scope}" if scope else ""
    return client.post(f"/api/v2/auth/logout{query}", headers=bearer(access_token))


def status_of(client, body):
    """(verify status, refresh status) for one sign-in's tokens."""
    verify = client.get("/api/v2/auth/verify", headers=bearer(body["access_token"]))
    refresh = client.post("/api/v2/auth/refresh", json={"refresh_token": body["refresh_token"]})
    return verify.status_code, refresh.status_code


def test_verify_describes_the_token(client, user, login):
    body = login(user)
    response = client.get("/api/v2/auth/verify", headers=bearer(body["access_token"]))
    assert response.status_code == 200
    answer = response.get_json()
    assert answer["valid"] is True
    assert answer["user"]["id"] == user.id
    assert isinstance(answer["session_id"], str)
    assert isinstance(answer["expires_at"], int)


def test_verify_without_a_token_is_401_missing_token(client):
    response = client.get("/api/v2/auth/verify")
    assert response.status_code == 401
    assert response.get_json()["code"] == "missing_token"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_an_expired_access_token_is_401_token_expired(client, user, login, clock):
    body = login(user)
    clock.advance(3600 + 6)
    response = client.get("/api/v2/auth/verify", headers=bearer(body["access_token"]))
    assert response.status_code == 401
    assert response.get_json()["code"] == "token_expired"


def test_local_logout_ends_only_this_session_at_once(client, user, login):
    this, other = login(user), login(user)
    assert logout(client, this["access_token"]).status_code == 204
    assert status_of(client, this) == (401, 401)
    assert status_of(client, other)[0] == 200


def test_logout_others_keeps_this_session(client, user, login):
    this, other = login(user), login(user)
    assert logout(client, this["access_token"], "others").status_code == 204
    assert status_of(client, other) == (401, 401)
    assert status_of(client, this) == (200, 200)


def test_logout_global_ends_every_session(client, user, login):
    this, other = login(user), login(user)
    assert logout(client, this["access_token"], "global").status_code == 204
    assert status_of(client, this) == (401, 401)
    assert status_of(client, other) == (401, 401)


def test_logout_does_not_touch_other_accounts(client, make_user, login):
    ada, bob = make_user("ada@example.com"), make_user("bob@example.com")
    ada_tokens, bob_tokens = login(ada), login(bob)
    logout(client, ada_tokens["access_token"], "global")
    assert status_of(client, bob_tokens) == (200, 200)


@pytest.mark.parametrize("scope", ["everything", "LOCAL", ""])
def test_an_unknown_scope_is_422_and_logs_nobody_out(client, user, login, scope):
    body = login(user)
    response = client.post(f"/api/v2/auth/logout?scope={scope}",
                           headers=bearer(body["access_token"]))
    assert response.status_code == 422
    assert response.get_json()["errors"][0]["pointer"] == "#/query/scope"
    assert status_of(client, body) == (200, 200)


def test_logout_needs_a_token(client):
    response = client.post("/api/v2/auth/logout")
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
