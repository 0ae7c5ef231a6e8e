"""flask users list / show / enable, and the plan catalogue (SVC_PLANS) at the CLI (issue 26)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent, User
from tests.support.cli import run, table


@pytest.fixture
def people(app, make_user, clock):
    """Five accounts a second apart, oldest first."""
    made = {}
    for email, name, fields in (
            ("ada@example.com", "Ada Lovelace", {}),
            ("bob@example.com", "Bob", {"plan": "pro"}),
            ("carol@example.com", "Carol Lovelace", {"operator": True}),
            ("dave@example.org", "Dave", {"plan": "pro"}),
            ("erin@example.org", "Erin", {})):
        made[email] = make_user(email, full_name=name, **fields)
        clock.advance(1)
    assert run(app, "users", "disable", "dave@example.org").exit_code == 0
    return made


def test_users_list_prints_a_table_oldest_first(app, people):
    result = run(app, "users", "list")
    assert result.exit_code == 0, result.output
    rows, last = table(result.output)
    assert list(rows) == list(people)
    assert rows["bob@example.com"].split()[1:4] == ["Bob", "pro", "active"]
    assert rows["dave@example.org"].split()[1:4] == ["Dave", "pro", "disabled"]
    assert rows["carol@example.com"].split()[1:6] == ["Carol", "Lovelace", "free", "active", "yes"]
    assert "More" not in result.output


@pytest.mark.parametrize(("options", "expected"), [
    (["--plan", "pro"], ["bob@example.com", "dave@example.org"]),
    (["--disabled"], ["dave@example.org"]),
    (["--active", "--plan", "pro"], ["bob@example.com"]),
    (["--operator"], ["carol@example.com"]),
    # Letters no account id (hex) holds: the search also matches a part of the id.
    (["--search", "LOVELACE"], ["ada@example.com", "carol@example.com"]),  # in either name
    (["--search", "carol@"], ["carol@example.com"]),  # in the address
    (["--search", "example.org"], ["dave@example.org", "erin@example.org"]),
    (["--search", "%%%"], []),  # no wildcard
    (["--search", "___"], []),
])
def test_users_list_filters(app, people, options, expected):
    result = run(app, "users", "list", *options)
    assert result.exit_code == 0, result.output
    if not expected:
        assert result.output == "No account matches.\n"
    else:
        assert list(table(result.output)[0]) == expected


def test_users_list_pages_with_the_cursor_it_prints(app, people, make_user):
    first = run(app, "users", "list", "--limit", "2")
    rows, last = table(first.output)
    assert list(rows) == ["ada@example.com", "bob@example.com"]
    assert last.startswith("More: the same command with --after ")
    make_user("zed@example.com")  # created while paging: last, not pushing another out
    seen = list(rows)
    while last.startswith("More"):
        page = run(app, "users", "list", "--limit", "2", "--after", last.split()[-1])
        assert page.exit_code == 0, page.output
        rows, last = table(page.output)
        seen += list(rows)
    assert seen == [*people, "zed@example.com"]


@pytest.mark.parametrize(("options", "exit_code", "says"), [
    (["--after", "garbage"], 1, "The cursor is not one this service gave."),
    (["--limit", "0"], 2, "Invalid value for '--limit'"),
    (["--limit", "101"], 2, "Invalid value for '--limit'"),
    (["--search", "a\x1b[2Jb"], 1, "Search for printable text only."),
    (["--search", "a\x00b"], 1, "Search for printable text only."),  # never reaches a query
    # ["2026-01-01T00:00:00+00:00","a\u0000b"]: neither does a cursor's NUL
    (["--after", "WyIyMDI2LTAxLTAxVDAwOjAwOjAwKzAwOjAwIiwiYVx1MDAwMGIiXQ"], 1,
     "The cursor is not one this service gave."),
])
def test_users_list_refuses_bad_input_without_a_traceback(app, people, options, exit_code,
                                                          says):
    result = run(app, "users", "list", *options)
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.exit_code == exit_code and says in result.output


def test_users_list_writes_no_escape_sequence_of_a_name(app, make_user):
    make_user("mallory@example.com", full_name="Mallory\x1b[2J\r\nroot")
    result = run(app, "users", "list")
    assert "\x1b" not in result.output and "\r" not in result.output
    assert "Mallory [2J root" in table(result.output)[0]["mallory@example.com"]


def shown(output):
    return {line[:13].rstrip(): line[14:] for line in output.splitlines()}


def test_users_show_tells_support_what_it_needs_and_no_secret(app, client, user, login):
    login(user)
    login(user)
    with app.app_context():
        stored = db.session.get(User, user.id)
        stored.email_verified = True
        db.session.commit()
        hashed = stored.password_hash
    run(app, "users", "grant-operator", user.email)
    result = run(app, "users", "show", user.email.upper())
    assert result.exit_code == 0, result.output
    found = shown(result.output)
    assert list(found) == ["id", "email", "name", "plan", "created", "confirmed", "disabled",
                           "operator", "providers", "factors", "sessions"]
    assert found["id"] == user.id and found["email"] == user.email and found["name"] == "Ada"
    assert found["plan"] == "free" and found["operator"] == "yes"
    assert found["confirmed"] == "yes" and found["disabled"] == "no"
    assert found["created"].endswith(" UTC") and found["providers"] == "none"
    assert found["factors"] == "authenticator app no, 0 passkeys, 0 recovery codes left"
    assert found["sessions"].startswith("2 open, last sign-in ")
    assert hashed not in result.output and "$argon2" not in result.output


def test_users_show_of_a_closing_account_says_when_it_is_erased(app, user):
    assert run(app, "users", "delete", user.email).exit_code == 0
    found = shown(run(app, "users", "show", user.email).output)
    assert found["disabled"].startswith("yes, since ") and found["erased after"]


@pytest.mark.parametrize("command", [["show"], ["enable"], ["disable"], ["set-plan", "pro"],
                                     ["delete"], ["reset-mfa"], ["grant-operator"]])
def test_an_unknown_address_is_a_clear_error(app, user, command):
    result = run(app, "users", command[0], "ghost@example.com", *command[1:])
    assert result.exit_code == 1
    assert result.output == "Error: No account for ghost@example.com.\n"


@pytest.mark.parametrize("address", ["ada\x00@example.com", "\x1b[2Jada@example.com"])
def test_an_address_with_a_control_character_reaches_no_query_and_no_terminal(app, user,
                                                                              address):
    # (color: as on a terminal, where click passes escape sequences on)
    result = app.test_cli_runner().invoke(args=["users", "show", address], color=True)
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.exit_code == 1 and result.output.startswith("Error: No account for ")
    assert "\x00" not in result.output and "\x1b" not in result.output


def test_users_enable_says_what_happened(app, client, user, login):
    not_disabled = run(app, "users", "enable", user.email)
    assert not_disabled.exit_code == 0
    assert not_disabled.output == f"{user.email} is not disabled: nothing changed.\n"
    assert run(app, "users", "disable", user.email).exit_code == 0
    again = run(app, "users", "disable", user.email)
    assert "was already disabled" in again.output
    enabled = run(app, "users", "enable", user.email)
    assert enabled.exit_code == 0
    assert enabled.output == f"Enabled {user.email}: it can sign in again.\n"
    login(user)
    with app.app_context():
        events = [e.event for e in db.session.scalars(
            select(AuditEvent).where(AuditEvent.user_id == user.id,
                                     AuditEvent.actor == "cli"))]
    assert events.count("account_enabled") == 1 and events.count("account_disabled") == 1


def test_users_enable_leaves_a_closing_account_to_its_owner(app, user):
    assert run(app, "users", "delete", user.email).exit_code == 0
    refused = run(app, "users", "enable", user.email)
    assert refused.exit_code == 1 and "only the link mailed to them" in refused.output


def test_a_malformed_plan_word_is_refused(app, user):
    # (Outside the catalogue: tests/unit/domain/accounts/test_plans_in_force.py.)
    bad = run(app, "users", "set-plan", user.email, "Gold Plan")
    assert bad.exit_code == 1 and "lower-case letters" in bad.output
    created = run(app, "users", "create", "new@example.com", "--password",
                  "a long enough passphrase", "--plan", "Gold Plan")
    assert created.exit_code == 1 and "lower-case letters" in created.output


class TestCatalogue:
    @pytest.fixture
    def settings(self):
        return {"PLANS": "basic, pro,team", "DEFAULT_PLAN": "basic"}

    def test_set_plan_refuses_a_plan_outside_it_and_names_the_plans(self, app, user):
        refused = run(app, "users", "set-plan", user.email, "gold")
        assert refused.exit_code == 1
        assert refused.output == "Error: There is no plan gold: the plans are basic, pro, team.\n"
        assert run(app, "users", "set-plan", user.email, "team").exit_code == 0
        with app.app_context():
            assert db.session.get(User, user.id).plan == "team"

    def test_create_takes_the_default_plan_and_refuses_others(self, app):
        made = run(app, "users", "create", "new@example.com", "--password",
                   "a long enough passphrase")
        assert made.exit_code == 0 and "plan basic." in made.output
        refused = run(app, "users", "create", "other@example.com", "--password",
                      "a long enough passphrase", "--plan", "free")
        assert refused.exit_code == 1 and "the plans are basic, pro, team" in refused.output
        with app.app_context():
            assert db.session.scalars(select(User.email)).all() == ["new@example.com"]
