"""A removed service client's tokens stay dead (issue 33, finding 9), whatever is added later
under its name: the usual answer to a leaked secret is `clients remove` then `clients add`, and
the tokens minted with the leaked secret must not come back with the new client. Checked at
every door that takes a client's own token (the admin API, and its per-client limit), and at
those that must never take one (verify, userinfo, introspection)."""

from __future__ import annotations

import pytest

from tests.support import admin
from tests.support.admin import authorized, printed_credentials
from tests.support.cli import run
from tests.support.oidc import CONFIDENTIAL, SECRET, SITES

ADMIN = "/api/admin/v1"


@pytest.fixture
def settings():
    return {"CLIENT_SITES": SITES, "RATELIMIT_ENABLED": True, "LIMIT_ADMIN": "5 per minute"}


def added(app, *scopes):
    result = run(app, "clients", "add", "billing", *(f"--scope={s}" for s in scopes))
    assert result.exit_code == 0, result.output
    return printed_credentials(result.output)


@pytest.fixture
def leaked(app, client):
    """A token of `billing`, whose secret leaked: then the client is removed and added again
    with the CLI, as the operators' guide says to."""
    token = admin.token(client, added(app, "users:read", "users:plan"))
    assert client.get(f"{ADMIN}/users", **authorized(token)).status_code == 200
    assert run(app, "clients", "remove", "billing").exit_code == 0
    assert client.get(f"{ADMIN}/users", **authorized(token)).status_code == 401
    return token


def test_its_tokens_stay_dead_once_a_client_of_its_name_is_added(app, client, user, leaked):
    fresh = admin.token(client, added(app, "users:read", "users:plan"))
    for method, path, body in (("get", "/users", None), ("get", f"/users/{user.id}", None),
                               ("patch", f"/users/{user.id}", {"plan": "pro"})):
        refused = getattr(client, method)(f"{ADMIN}{path}", json=body, **authorized(leaked))
        assert refused.status_code == 401, (method, path)
        assert refused.get_json()["code"] == "invalid_token"
    assert client.get(f"{ADMIN}/users/{user.id}", **authorized(fresh)).get_json()["plan"] == "free"


def test_its_requests_do_not_use_up_the_new_clients_limit(app, client, leaked):
    fresh = admin.token(client, added(app, "users:read"))
    for _ in range(6):
        client.get(f"{ADMIN}/users", **authorized(leaked))
    assert client.get(f"{ADMIN}/users", **authorized(fresh)).status_code == 200


def test_no_other_door_takes_it(app, client, leaked):
    added(app, "users:read", "users:plan")
    for path in ("/api/v2/auth/verify", "/oauth2/userinfo", "/api/v2/auth/account/export"):
        assert client.get(path, **authorized(leaked)).status_code == 401, path
    introspected = client.post("/oauth2/introspect", data={"token": leaked},
                               auth=(CONFIDENTIAL, SECRET))
    assert introspected.status_code == 200 and introspected.get_json() == {"active": False}


def test_a_rotated_secret_leaves_the_clients_tokens_working(app, client):
    token = admin.token(client, added(app, "users:read"))
    assert run(app, "clients", "rotate-secret", "billing").exit_code == 0
    assert client.get(f"{ADMIN}/users", **authorized(token)).status_code == 200
