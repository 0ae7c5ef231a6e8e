"""An account in its deletion grace period has one name wherever an operator looks: the admin
API's `status` (one account, the list and its filter) and `flask users list` say
`deletion_scheduled` (issue 36; the CLI said "closing" while the API said "disabled")."""

from __future__ import annotations

from tests.support import admin
from tests.support.admin import authorized
from tests.support.cli import run

ADMIN = "/api/admin/v1"


def test_a_deleted_account_is_deletion_scheduled_in_the_api_and_the_cli(app, client, user,
                                                                         make_user):
    support = admin.token(client, admin.register(app, "support", "users:read", "users:write"))
    other = make_user("other@example.com")
    run(app, "users", "disable", other.email)
    deleted = client.delete(f"{ADMIN}/users/{user.id}", **authorized(support))
    assert deleted.status_code == 202 and deleted.get_json()["status"] == "deletion_scheduled"

    shown = client.get(f"{ADMIN}/users/{user.id}", **authorized(support)).get_json()
    assert shown["status"] == "deletion_scheduled"
    for status, expected in (("deletion_scheduled", [user.email]), ("disabled", [other.email]),
                             ("active", [])):
        listed = client.get(f"{ADMIN}/users", query_string={"status": status},
                            **authorized(support)).get_json()["users"]
        assert [found["email"] for found in listed] == expected, status

    rows = {line.split()[0]: line.split() for line in
            run(app, "users", "list").output.splitlines()[1:] if "@" in line}
    assert "deletion_scheduled" in rows[user.email]
    assert "disabled" in rows[other.email]
