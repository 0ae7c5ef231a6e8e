"""A wrong query parameter is answered 422 `invalid_body` (the stable code) with a detail that
names the query, never "The request body is invalid." (a GET has no body; issue 36)."""

from __future__ import annotations

from tests.support import admin
from tests.support.admin import authorized


def test_a_wrong_admin_query_parameter_names_the_query(app, client):
    support = admin.token(client, admin.register(app, "support", "users:read"))
    for query in ({"status": "gone"}, {"limit": "0"}, {"cursor": "WzEsMl0"},
                  {"plan": ["a", "b"]}):
        answer = client.get("/api/admin/v1/users", query_string=query, **authorized(support))
        body = answer.get_json()
        assert answer.status_code == 422 and body["code"] == "invalid_body", (query, body)
        assert "body" not in body["detail"], (query, body)


def test_an_unknown_logout_scope_names_the_query(client, user, login):
    tokens = login(user)
    answer = client.post("/api/v2/auth/logout?scope=everyone",
                         headers={"Authorization": f"Bearer {tokens['access_token']}"})
    body = answer.get_json()
    assert answer.status_code == 422 and body["code"] == "invalid_body"
    assert body["detail"] == "A query parameter is invalid."
    assert body["errors"] == [{"pointer": "#/query/scope",
                               "detail": "scope must be local, others or global."}]
