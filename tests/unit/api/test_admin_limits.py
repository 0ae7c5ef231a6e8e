"""The admin API is limited per service client (SVC_LIMIT_ADMIN): a runaway script uses up its
own allowance, not another client's."""

from __future__ import annotations

import pytest

from tests.support import admin
from tests.support.admin import authorized


@pytest.fixture
def settings():
    return {"RATELIMIT_ENABLED": True, "LIMIT_ADMIN": "3 per minute"}


def test_each_client_has_its_own_allowance(app, client):
    runaway = admin.token(client, admin.register(app, "runaway", "users:read"))
    other = admin.token(client, admin.register(app, "other", "users:read"))
    answers = [client.get("/api/admin/v1/users", **authorized(runaway)).status_code
               for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    limited = client.get("/api/admin/v1/users", **authorized(runaway))
    assert limited.mimetype == "application/problem+json" and "Retry-After" in limited.headers
    assert client.get("/api/admin/v1/users", **authorized(other)).status_code == 200
