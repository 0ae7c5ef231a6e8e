"""The account page (app/pages/account.py): the plan by its name in the page's language."""

from __future__ import annotations

import re

import pytest

from tests.support.pages import submit


def plan_shown(client, user, language: str) -> str:
    assert submit(client, "/login", {"email": user.email, "password": user.password}
                  ).status_code == 302
    page = client.get("/account", headers={"Accept-Language": language})
    found = re.search(r"<dt>[^<]*</dt><dd>([^<]*)</dd>\s*</dl>", page.text)
    assert found, page.text
    return found.group(1)


@pytest.mark.parametrize(("language", "shown"), [
    ("en", "Free"), ("de", "Kostenlos"), ("fr", "Gratuit"), ("es", "Gratis")])
def test_the_plan_shows_by_its_name_in_the_pages_language(client, make_user, language, shown):
    assert plan_shown(client, make_user(), language) == shown


class TestNamedByTheOperator:
    @pytest.fixture
    def settings(self):
        return {"PLANS": "free,gold,silver",
                "PLAN_NAMES": {"gold": {"en": "Gold", "de": "Goldtarif"}}}

    @pytest.mark.parametrize(("plan", "language", "shown"), [
        ("gold", "de", "Goldtarif"), ("gold", "fr", "Gold"), ("silver", "de", "silver")])
    def test_a_named_plan_and_one_without_a_name(self, client, make_user, plan, language,
                                                 shown):
        assert plan_shown(client, make_user(plan=plan), language) == shown
