"""The console's audit trail (issue 33 finding 6, issue 36): each page an operator sees leaves a
trace on the accounts it showed, a change names the operator by address as well as id and carries
its before and after values, and the account's activity leaves reads out unless asked for."""

from __future__ import annotations

from tests.support.audit import audit_rows
from tests.support.pages import submit
from tests.unit.console.test_views import CLI, operator  # noqa: F401 (a fixture)


def test_every_page_an_operator_sees_is_traced_with_the_accounts_on_it(app, user, make_user,
                                                                       operator):  # noqa: F811
    browser, op, _secret = operator
    other = make_user("bob@example.com")
    assert user.email in browser.get("/admin/", query_string={"email": user.email}).text
    assert browser.get(f"/admin/users/{user.id}").status_code == 200
    assert browser.get(f"/admin/users/{user.id}/edit").status_code == 200
    seen = [(e.event, e.user_id, e.actor_email, e.read)
            for e in audit_rows(app, actor_email=op.email)]
    assert seen == [("console:search", user.id, op.email, True),
                    ("console:account", user.id, op.email, True),
                    ("console:confirm", user.id, op.email, True)]
    assert not audit_rows(app, user_id=other.id, read=True)
    assert all(e.actor.startswith("operator:") for e in audit_rows(app, actor_email=op.email))


def test_a_change_names_the_operator_by_address_with_before_and_after(
        app, user, operator):  # noqa: F811
    browser, op, _secret = operator
    done = submit(browser, f"/admin/users/{user.id}/edit", {"plan": "pro", "full_name": "Ada"})
    assert done.status_code == 302
    [changed] = audit_rows(app, event="plan_changed")
    assert changed.actor_email == op.email and changed.actor.startswith("operator:")
    assert changed.changes == {"plan": {"before": "free", "after": "pro"}}
    assert not changed.read
    page = browser.get(f"/admin/users/{user.id}").text
    assert f"plan_changed · by {op.email} ({changed.actor})" in page
    assert 'plan: "free" → "pro"' in page


def test_the_activity_leaves_reads_out_unless_asked_for(app, user, operator):  # noqa: F811
    browser, op, _secret = operator
    submit(browser, f"/admin/users/{user.id}/disable", {})
    browser.get(f"/admin/users/{user.id}")
    page = browser.get(f"/admin/users/{user.id}").text
    assert "account_disabled" in page and "console:account" not in page
    assert "Show reads too" in page
    everything = browser.get(f"/admin/users/{user.id}", query_string={"include_reads": "1"}).text
    assert "console:account" in everything and "account_disabled" in everything


def test_roles_granted_from_the_command_line_carry_before_and_after(app, user):
    from app.domain.admin import actions, directory
    with app.app_context():
        actions.set_operator(directory.require_by_email(user.email), CLI, operator=True)
        actions.set_operator(directory.require_by_email(user.email), CLI, operator=False)
    assert [(e.event, e.actor, e.changes) for e in audit_rows(app, user_id=user.id)] == [
        ("operator_granted", "cli", {"operator": {"before": False, "after": True}}),
        ("operator_revoked", "cli", {"operator": {"before": True, "after": False}})]
