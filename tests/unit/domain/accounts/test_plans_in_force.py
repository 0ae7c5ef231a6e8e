"""A plan catalogue is always in force (issue 33, finding 11): with SVC_PLANS unset the plans are
free, pro and team, and a word outside them is refused through every door (admin API, console,
CLI); settings are checked whole, so a value with a line break at its end stops the start with
the setting's name instead of reaching tokens or the registry."""

from __future__ import annotations

import json

import pytest

from app import create_app
from app.extensions import db
from app.models import User
from tests.support import admin
from tests.support.admin import authorized
from tests.support.cli import run
from tests.support.pages import submit
from tests.support.settings import change_settings
from tests.unit.console.test_views import operator  # noqa: F401 (a fixture)

ADMIN = "/api/admin/v1"
NAMED = "There is no plan platinum-typo: the plans are free, pro, team."


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", "users:read", "users:write"))


def plan_of(app, user):
    with app.app_context():
        return db.session.get(User, user.id).plan


def test_the_admin_api_refuses_a_plan_outside_the_default_catalogue(app, client, user,
                                                                    support):
    refused = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "platinum-typo"},
                           **authorized(support))
    assert refused.status_code == 422, refused.get_json()
    assert refused.get_json()["code"] == "unknown_plan"
    assert refused.get_json()["errors"] == [{"pointer": "#/plan", "detail": NAMED}]
    created = client.post(f"{ADMIN}/users", json={"email": "new@example.com",
                                                  "plan": "platinum-typo"}, **authorized(support))
    assert created.status_code == 422 and created.get_json()["code"] == "unknown_plan"
    assert plan_of(app, user) == "free"
    kept = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "team"}, **authorized(support))
    assert kept.status_code == 200 and kept.get_json()["plan"] == "team"


def test_the_cli_refuses_it(app, user):
    refused = run(app, "users", "set-plan", user.email, "platinum-typo")
    assert refused.exit_code == 1 and refused.output == f"Error: {NAMED}\n"
    created = run(app, "users", "create", "new@example.com", "--password",
                  "a long enough passphrase", "--plan", "platinum-typo")
    assert created.exit_code == 1 and "the plans are free, pro, team" in created.output
    assert plan_of(app, user) == "free"
    assert run(app, "users", "set-plan", user.email, "pro").exit_code == 0


def test_the_console_refuses_it(app, user, operator):  # noqa: F811 (the fixture)
    browser = operator[0]
    answer = submit(browser, f"/admin/users/{user.id}/edit", {"plan": "platinum-typo"})
    assert answer.status_code == 200 and NAMED in answer.text
    assert plan_of(app, user) == "free"


@pytest.mark.parametrize("plans", ["", "   "])
def test_an_empty_catalogue_is_the_default_one(app, plans):
    from app.domain.accounts import plans as plan_rules
    change_settings(app, PLANS=plans)
    with app.app_context():
        assert plan_rules.catalogue() == ("free", "pro", "team")


@pytest.fixture
def start(monkeypatch, tmp_path):
    def start_with(**env):
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        return create_app({"INSTANCE_PATH": str(tmp_path)})
    return start_with


def test_a_default_plan_with_a_line_break_stops_the_start(start):
    with pytest.raises(RuntimeError, match="SVC_DEFAULT_PLAN must be a plan"):
        start(SVC_DEFAULT_PLAN="pro\n")


def test_a_default_plan_outside_the_default_catalogue_stops_the_start(start):
    with pytest.raises(RuntimeError, match=r"SVC_DEFAULT_PLAN is basic, which is not one of "
                                           r"SVC_PLANS \(free, pro, team\)"):
        start(SVC_DEFAULT_PLAN="basic")


SITE = {"redirect_uris": ["https://notes.example/cb"]}


@pytest.mark.parametrize("sites", [
    {"notes\n": SITE},
    {"notes": {**SITE, "webhook_url": "https://notes.example/hook",
               "webhook_secret": "whsec_" + "A" * 32 + "\n"}},
])
def test_a_site_setting_with_a_line_break_stops_the_start(start, sites):
    with pytest.raises(RuntimeError, match=r"SVC_CLIENT_SITES\["):
        start(SVC_CLIENT_SITES=json.dumps(sites))


def test_a_service_client_name_with_a_line_break_is_refused(app):
    refused = run(app, "clients", "add", "billing\n", "--scope", "users:plan")
    assert refused.exit_code != 0 and "lower-case letters, digits and dashes" in refused.output
