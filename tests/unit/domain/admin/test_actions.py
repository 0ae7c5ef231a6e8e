"""An operator's disable holds through the owner's restore link (issue 33, finding 8): an account
in its deletion grace period can be disabled (it answered 200 and did nothing), and the owner's
restore link then cancels the deletion but leaves the account disabled, telling no site it is
enabled. Through each door an operator has: the admin API, the console and the CLI; the owner
leaves through the v2 API and restores through the mailed link's page."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AccountEvent, AuditEvent, User
from tests.support import admin
from tests.support.admin import authorized
from tests.support.cli import run
from tests.support.pages import submit
from tests.unit.console.test_views import operator  # noqa: F401 (a fixture)

ADMIN = "/api/admin/v1"


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", "users:read", "users:write"))


@pytest.fixture
def leaving(client, user, login, mailbox):
    """The owner closed the account (v2): the restore link it was mailed."""
    tokens = login(user)
    left = client.delete("/api/v2/auth/account", json={"password": user.password},
                         headers={"Authorization": f"Bearer {tokens['access_token']}"})
    assert left.status_code == 202, left.get_json()
    return mailbox.last_link(user.email, "/account/restore").split("token=")[1]


def restore(client, token):
    page = submit(client, f"/account/restore?token={token}", {"token": token})
    assert page.status_code == 200, page.text


def signs_in(client, user):
    return client.post("/api/v2/auth/login", json={"email": user.email,
                                                   "password": user.password}).status_code


def events(app, user):
    """The kinds of the account's events for the sites."""
    with app.app_context():
        return list(db.session.scalars(select(AccountEvent.type).where(
            AccountEvent.user_id == user.id)))


def audited(app, user):
    with app.app_context():
        return list(db.session.scalars(select(AuditEvent.event).where(
            AuditEvent.user_id == user.id)))


def held(app, client, user):
    """Disabled after the restore: no sign-in, no deletion pending, no user.enabled."""
    assert signs_in(client, user) == 401
    with app.app_context():
        found = db.session.get(User, user.id)
        assert found.disabled_at is not None and found.deletion_scheduled_at is None
    told = events(app, user)
    assert "user.disabled" in told and "user.enabled" not in told
    assert audited(app, user).count("account_disabled") == 1


def test_the_admin_apis_disable_holds_through_a_restore(app, client, user, support, leaving):
    disabled = client.post(f"{ADMIN}/users/{user.id}/disable", **authorized(support))
    assert disabled.status_code == 200 and disabled.get_json()["disabled_at"]
    restore(client, leaving)
    held(app, client, user)
    enabled = client.post(f"{ADMIN}/users/{user.id}/enable", **authorized(support))
    assert enabled.status_code == 200
    assert signs_in(client, user) == 200


def test_the_consoles_disable_holds_through_a_restore(app, client, user, leaving,
                                                      operator):  # noqa: F811 (the fixture)
    browser = operator[0]
    page = browser.get(f"/admin/users/{user.id}")
    assert f"/admin/users/{user.id}/disable" in page.text  # offered while the owner leaves
    answer = submit(browser, f"/admin/users/{user.id}/disable", {})
    assert answer.status_code in (200, 302), answer.text
    restore(client, leaving)
    held(app, client, user)


def test_the_clis_disable_holds_through_a_restore(app, client, user, leaving):
    disabled = run(app, "users", "disable", user.email)
    assert disabled.exit_code == 0 and disabled.output.startswith("Disabled ")
    restore(client, leaving)
    held(app, client, user)
    assert run(app, "users", "enable", user.email).exit_code == 0
    assert signs_in(client, user) == 200


def test_a_restore_without_a_disable_enables_and_says_so(app, client, user, leaving):
    restore(client, leaving)
    assert signs_in(client, user) == 200
    assert "user.enabled" in events(app, user)
