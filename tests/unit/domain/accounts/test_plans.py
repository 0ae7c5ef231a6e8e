"""The plan catalogue (SVC_PLANS, issue 26): one rule in the domain, kept by the admin API, the
console, sign-up and the CLI (tests/unit/test_cli_users.py); new accounts get SVC_DEFAULT_PLAN.

Plans' names for people (app/domain/accounts/plans.py `display_name`, SVC_PLAN_NAMES)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app import create_app
from app.domain.accounts import accounts, plans
from app.extensions import db
from app.models import User
from tests.support import admin
from tests.support.admin import authorized
from tests.support.pages import submit

ADMIN = "/api/admin/v1"
NAMED = "There is no plan gold: the plans are basic, pro, team."


@pytest.fixture
def settings():
    return {"PLANS": "basic,pro,team", "DEFAULT_PLAN": "basic"}


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", "users:read", "users:write"))


def test_patch_refuses_a_plan_outside_it_with_a_documented_422(app, client, user, support):
    refused = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "gold"}, **authorized(support))
    assert refused.status_code == 422 and refused.mimetype == "application/problem+json"
    assert refused.get_json() | {"type": None, "title": None} == {
        "type": None, "title": None, "status": 422, "code": "unknown_plan", "detail": NAMED,
        "errors": [{"pointer": "#/plan", "detail": NAMED}]}
    with app.app_context():
        assert db.session.get(User, user.id).plan == "basic"
    kept = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "team"}, **authorized(support))
    assert kept.status_code == 200 and kept.get_json()["plan"] == "team"


def test_create_refuses_a_plan_outside_it_and_defaults_to_the_default_plan(app, client,
                                                                           support, mailbox):
    refused = client.post(f"{ADMIN}/users", json={"email": "new@example.com", "plan": "free"},
                          **authorized(support))
    assert refused.status_code == 422 and refused.get_json()["code"] == "unknown_plan"
    assert "the plans are basic, pro, team" in refused.get_json()["detail"]
    with app.app_context():
        assert db.session.scalars(select(User)).all() == []
    assert mailbox.messages == []  # no invitation either
    made = client.post(f"{ADMIN}/users", json={"email": "new@example.com"}, **authorized(support))
    assert made.status_code == 201 and made.get_json()["plan"] == "basic"
    assert len(mailbox.to("new@example.com")) == 1


def test_the_openapi_document_names_the_refusal(client):
    paths = client.get("/api/openapi.json").get_json()["paths"]
    for operation in (paths["/api/admin/v1/users"]["post"],
                      paths["/api/admin/v1/users/{user_id}"]["patch"]):
        assert "422 `unknown_plan`" in operation["description"]
        assert "422" in operation["responses"]


def test_sign_up_and_a_providers_first_sign_in_get_the_default_plan(app, client):
    signed_up = client.post("/api/v2/auth/signup", json={"email": "grace@example.com",
                                                         "password": "a long enough passphrase"})
    assert signed_up.status_code == 201 and signed_up.get_json()["user"]["plan"] == "basic"
    with app.app_context():  # what a provider's first sign-in calls (accounts/identities.py)
        assert accounts.create_user("linus@example.com", None, "Linus").plan == "basic"
        with pytest.raises(plans.UnknownPlan):
            accounts.create_user("other@example.com", None, "Other", "free")


def test_the_console_says_the_plans_and_changes_nothing(app, user, make_user, clock):
    from tests.support.second_factors import code_at, enrolled_user
    from tests.unit.console.test_views import _make_operator
    account, secret, _codes = enrolled_user(app, make_user, clock, "op@example.com")
    _make_operator(app, account.email)
    browser = app.test_client()
    submit(browser, "/login", {"email": account.email, "password": account.password})
    submit(browser, "/login/second-factor", {"code": code_at(secret, clock)}, token_from="/login")
    answer = submit(browser, f"/admin/users/{user.id}/edit", {"plan": "gold"})
    assert answer.status_code == 200 and NAMED in answer.text
    with app.app_context():
        assert db.session.get(User, user.id).plan == "basic"


@pytest.mark.parametrize("settings", [{"PLANS": None}])  # the default catalogue
def test_a_plan_with_a_line_break_at_its_end_is_no_plan(app, settings):
    # (Python's `$` matches before a final line break; the console and the CLI reach check.)
    with app.app_context(), pytest.raises(plans.InvalidBody):
        plans.check("pro\n")


@pytest.mark.parametrize(("names", "plan", "language", "shown"), [
    ({}, "pro", "de", "Pro"),
    ({}, "gold", "de", "gold"),  # no name: the word itself
    ({"gold": {"en": "Gold", "de": "Goldtarif"}}, "gold", "de", "Goldtarif"),
    ({"gold": {"en": "Gold", "de": "Goldtarif"}}, "gold", "fr", "Gold"),  # else English
    ({"gold": {"es": "Oro", "de": "Goldtarif"}}, "gold", "fr", "Oro"),  # else the first
    ({"gold": "Gold"}, "gold", "es", "Gold"),  # one text for every language
    ({"free": {"de": "Gratis!"}}, "free", "de", "Gratis!"),  # the operator's over ours
])
def test_the_name_a_person_reads(tmp_path, names, plan, language, shown):
    app = create_app({"INSTANCE_PATH": str(tmp_path), "PLAN_NAMES": names})
    with app.app_context():
        assert plans.display_name(plan, language) == shown


def test_our_own_names_are_words_the_pages_translate(tmp_path):
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    with app.app_context():
        assert plans.display_name("free", "de").message == "Free"


@pytest.mark.parametrize(("names", "message"), [
    ('["pro"]', "it is a JSON object of plans"),
    ('{"Gold Plan": "Gold"}', "'Gold Plan' is not a plan"),
    ('{"gold": ""}', "the name of gold is a text of at most 64"),
    ('{"gold": {"en": 5}}', "the name of gold is a text"),
    ('{"gold": {}}', "the name of gold is a text"),
    ('{"gold": "a\\u0007bell"}', "the name of gold is a text"),
])
def test_malformed_names_stop_the_start(monkeypatch, tmp_path, names, message):
    monkeypatch.setenv("SVC_PLAN_NAMES", names)
    with pytest.raises(RuntimeError, match="SVC_PLAN_NAMES must be a JSON object such as .*"
                                           + message):
        create_app({"INSTANCE_PATH": str(tmp_path)})
