"""The support desk finds people (issue 36): `q` searches the address, the name and the id, for a
part of any of them, in any case, through the admin API, the console and `flask users list
--search`; wildcards are themselves; bad input is a 4xx. And every list of accounts pages in a
stable order, ties broken by id (issue 34: one row comparison, read from an index). On SQLite and
on PostgreSQL; the plans are tests/test_scale_plans.py's."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.support import admin
from tests.support.admin import authorized
from tests.support.cli import run, table
from tests.unit.console.test_views import operator  # noqa: F401 (a fixture: an operator signed in)

USERS = "/api/admin/v1/users"


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", "users:read"))


@pytest.fixture
def people(make_user, clock):
    """Accounts a second apart, oldest first: {email: id}."""
    made = {}
    for email, name in (("ada@example.com", "Ada Lovelace"), ("grace@navy.example", "Grace Hopper"),
                        ("rate@example.com", "Rate 100%"), ("plain@example.com", "Plain 1000"),
                        ("snake@example.com", "snake_case"), ("camel@example.com", "snakeXcase"),
                        ("slash@example.com", "back\\slash")):
        made[email] = make_user(email, full_name=name).id
        clock.advance(1)
    return made


def found(client, support, **query):
    answer = client.get(USERS, query_string=query, **authorized(support))
    assert answer.status_code == 200, answer.get_json()
    return [user["email"] for user in answer.get_json()["users"]]


def test_q_finds_a_part_of_the_name_the_address_or_the_id_in_any_case(client, support, people):
    assert found(client, support, q="LOVEL") == ["ada@example.com"]
    assert found(client, support, q="navy.EX") == ["grace@navy.example"]
    grace = people["grace@navy.example"]
    assert found(client, support, q=grace[9:20]) == ["grace@navy.example"]
    assert found(client, support, q=grace) == ["grace@navy.example"]
    assert found(client, support, q="example.com") == [  # oldest first
        "ada@example.com", "rate@example.com", "plain@example.com", "snake@example.com",
        "camel@example.com", "slash@example.com"]
    assert found(client, support, q="hopper", plan="free") == ["grace@navy.example"]
    assert found(client, support, q="hopper", plan="pro") == []


@pytest.mark.parametrize(("q", "expected"), [
    ("100%", ["rate@example.com"]),  # not "100" and anything
    ("e_c", ["snake@example.com"]),  # not any one character
    ("k\\s", ["slash@example.com"]),
    ("%%%", []), ("___", []), ("\\\\\\", []),
])
def test_wildcards_in_q_are_themselves(client, support, people, q, expected):
    assert found(client, support, q=q) == expected


@pytest.mark.parametrize("q", ["ab", "  ab  ", "x" * 255, "y" * 20_000, "a\x00bc", "a\x1b[2J",
                               "é" * 300])
def test_a_q_too_short_too_long_or_not_printable_is_a_422_problem(client, support, people, q):
    answer = client.get(USERS, query_string={"q": q}, **authorized(support))
    assert answer.status_code == 422, answer.get_json()
    assert answer.mimetype == "application/problem+json"


def test_pages_of_a_search_neither_repeat_nor_miss(app, client, support, make_user, clock):
    for n in range(7):
        make_user(f"finder{n}@example.com", full_name=f"Finder {n}")
        clock.advance(1)
    seen, cursor = [], None
    while True:
        query = {"q": "FINDER", "limit": "3", **({"cursor": cursor} if cursor else {})}
        page = client.get(USERS, query_string=query, **authorized(support)).get_json()
        seen += [user["email"] for user in page["users"]]
        if len(seen) == 3:
            make_user("finder-late@example.com", full_name="Late")  # created while paging
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"finder{n}@example.com" for n in range(7)] + ["finder-late@example.com"]


def test_accounts_made_in_the_same_instant_page_by_id_once_each(app, client, support, make_user):
    at = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    ids = sorted(make_user(f"twin{n}@example.com", created_at=at).id for n in range(5))
    seen, cursor = [], None
    while True:
        query = {"email": "twin", "limit": "2", **({"cursor": cursor} if cursor else {})}
        page = client.get(USERS, query_string=query, **authorized(support)).get_json()
        seen += [user["id"] for user in page["users"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids


def test_an_address_prefix_is_any_case_and_stops_at_its_end(client, support, make_user):
    for email in ("ada@example.com", "adam@example.com", "adb@example.com", "ad@example.com",
                  "zoë@example.com", "zoe@example.com"):
        make_user(email)
    assert sorted(found(client, support, email="ADA")) == ["ada@example.com",
                                                          "adam@example.com"]
    assert found(client, support, email="zoë") == ["zoë@example.com"]
    assert found(client, support, email="%") == []


def test_the_console_searches_with_q_and_keeps_it_on_the_next_page(app, operator, people,  # noqa: F811
                                                                    make_user):
    browser, _account, _secret = operator
    answer = browser.get("/admin", query_string={"q": "hopper"})
    assert answer.status_code == 200
    assert "grace@navy.example" in answer.text and "ada@example.com" not in answer.text
    for n in range(51):
        make_user(f"many{n}@example.com", full_name="Many")
    first = browser.get("/admin", query_string={"q": "many"})
    assert "Next page" in first.text and "q=many" in first.text


@pytest.mark.parametrize("q", ["ab", "z" * 300])
def test_the_console_says_what_is_wrong_with_q(operator, people, q):  # noqa: F811
    browser, _account, _secret = operator
    answer = browser.get("/admin", query_string={"q": q})
    assert answer.status_code == 422
    assert "Search for 3 to 254 characters." in answer.text
    assert 'name="q"' in answer.text  # the form, to try again


def test_the_cli_searches_the_id_too(app, people):
    grace = people["grace@navy.example"]
    result = run(app, "users", "list", "--search", grace[:8])
    assert result.exit_code == 0, result.output
    assert list(table(result.output)[0]) == ["grace@navy.example"]
    short = run(app, "users", "list", "--search", "ab")
    assert short.exit_code == 1 and "Search for 3 to 254 characters." in short.output


def test_the_admin_openapi_document_describes_q(client):
    listed = client.get("/api/openapi.json").get_json()["paths"][USERS]["get"]
    (q,) = [param for param in listed["parameters"] if param["name"] == "q"]
    assert q["schema"] == {"type": "string", "minLength": 3, "maxLength": 254}
    assert "name" in q["description"] and "id" in q["description"]
