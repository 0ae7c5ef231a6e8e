"""The account page's name (app/pages/account.py): the person changes their own name with the
page's form (its CSRF token), checked as the API and the sign-up check one, audited; a refused
change is a 4xx on the page and changes nothing. (The sites hearing it:
tests/events/test_own_name.py.) And the plan, by its name in the page's language."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent, User
from tests.support.pages import submit


@pytest.fixture
def signed_in(client, user):
    response = submit(client, "/login", {"email": user.email, "password": user.password})
    assert response.status_code == 302 and response.headers["Location"] == "/account"
    return client


def _state(app, user):
    with app.app_context():
        name = db.session.get(User, user.id).full_name
        audited = db.session.scalars(select(AuditEvent.changes).where(
            AuditEvent.user_id == user.id, AuditEvent.event == "profile_changed")).all()
        return name, audited


def test_the_account_page_offers_the_name_to_change(signed_in):
    page = signed_in.get("/account").text
    assert 'action="/account/name"' in page and 'id="new-name"' in page
    assert 'value="Ada"' in page


def test_a_person_changes_their_own_name(app, signed_in, user):
    changed = submit(signed_in, "/account/name", {"full_name": "  Ada Lovelace "},
                     token_from="/account")
    assert changed.status_code == 302 and changed.headers["Location"] == "/account"
    name, audited = _state(app, user)
    assert name == "Ada Lovelace"
    assert len(audited) == 1 and "Ada Lovelace" in str(audited[0])
    page = signed_in.get("/account").text
    assert "Name changed." in page and 'value="Ada Lovelace"' in page


def test_the_name_may_be_emptied(app, signed_in, user):
    assert submit(signed_in, "/account/name", {"full_name": "  "},
                  token_from="/account").status_code == 302
    assert _state(app, user)[0] == ""


def test_without_the_pages_csrf_token_nothing_changes(app, signed_in, user):
    assert signed_in.post("/account/name", data={"full_name": "Mallory"}).status_code == 400
    forged = signed_in.post("/account/name", data={"full_name": "Mallory", "csrf_token": "x"})
    assert forged.status_code == 400
    assert _state(app, user) == ("Ada", [])


def test_signed_out_it_changes_nothing(app, client, user):
    asked = submit(client, "/account/name", {"full_name": "Mallory"}, token_from="/login")
    assert asked.status_code in (302, 401) and _state(app, user) == ("Ada", [])


@pytest.mark.parametrize("name", ["x" * 201, "Ada\x00", "Ada\u202eecalevoL", "Ada\nLovelace",
                                  "\x1b[31mAda"])
def test_a_bad_name_is_refused_on_the_page_and_changes_nothing(app, signed_in, user, name):
    refused = submit(signed_in, "/account/name", {"full_name": name}, token_from="/account")
    assert refused.status_code == 422
    assert 'aria-invalid="true"' in refused.text and 'id="new-name-error"' in refused.text
    assert _state(app, user) == ("Ada", [])


def test_a_field_too_many_is_no_error(app, signed_in, user):
    # A form with other fields (a forged one) changes the name only.
    changed = submit(signed_in, "/account/name", {"full_name": "Ada L.", "plan": "team",
                                                  "email": "mallory@example.com"},
                     token_from="/account")
    assert changed.status_code == 302
    with app.app_context():
        found = db.session.get(User, user.id)
        assert (found.full_name, found.plan, found.email) == ("Ada L.", "free", user.email)



def test_the_page_says_it_in_the_persons_language(app, signed_in, user):
    signed_in.set_cookie("svc_lang", "de")
    changed = submit(signed_in, "/account/name", {"full_name": "Ada K."}, token_from="/account")
    assert changed.status_code == 302
    page = signed_in.get("/account").text
    assert "Name geändert." in page and "Namen ändern" in page


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
