"""The admin API while its PostgreSQL restarts (issue 33 finding 16): the audit of a call, written
once the view has answered, never turns an answer into a 500. A change that committed answers
success and its own audit event (with before and after) is in the database; the call's row, if
the database did not take it, is in the log. A change that did not commit answers 503, and so
does a read whose trace could not be kept.

Runs on a real PostgreSQL: at the chosen moment the database stops accepting connections and
every open one is ended (pg_terminate_backend), as a restart does."""

from __future__ import annotations

from sqlalchemy import select

from app.domain.admin import actions, directory
from app.extensions import db
from app.models import AccountEvent, User
from tests.support.admin import authorized
from tests.support.audit import audit_rows
from tests.support.outages import database_url, first, outage, then  # noqa: F401 (fixtures)
from tests.unit.api.test_admin import ADMIN, support  # noqa: F401 (a fixture)


def stored(app, user_id: str) -> tuple[str, list[str]]:
    with app.app_context():
        plan = db.session.get(User, user_id).plan
        kinds = list(db.session.scalars(select(AccountEvent.type)
                                        .where(AccountEvent.user_id == user_id)))
        return plan, kinds


def test_a_change_that_committed_answers_success_and_keeps_its_audit(
        app, client, user, support, outage, monkeypatch, caplog):  # noqa: F811
    monkeypatch.setattr(actions, "update", then(outage, actions.update))
    answer = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"}, **authorized(support))
    assert answer.status_code == 200, answer.text
    assert answer.get_json()["plan"] == "pro"
    outage.end()
    plan, kinds = stored(app, user.id)
    assert plan == "pro" and "user.updated" in kinds
    [changed] = audit_rows(app, event="plan_changed")
    assert changed.changes == {"plan": {"before": "free", "after": "pro"}}
    assert changed.actor == "client:support"
    # The call's own row did not reach the database: the log has it.
    assert not audit_rows(app, event="admin_api:update_user")
    assert "audit event not written" in caplog.text
    assert f"event=admin_api:update_user users={user.id}" in caplog.text


def test_a_change_that_did_not_commit_answers_503(
        app, client, user, support, outage, monkeypatch):  # noqa: F811
    monkeypatch.setattr(actions, "update", first(outage, actions.update))
    answer = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"}, **authorized(support))
    assert answer.status_code == 503, answer.text
    assert answer.headers["Content-Type"] == "application/problem+json"
    assert answer.get_json()["code"] == "service_unavailable" and answer.headers["Retry-After"]
    outage.end()
    plan, kinds = stored(app, user.id)
    assert plan == "free" and "user.updated" not in kinds
    assert not audit_rows(app, event="plan_changed")


def test_a_read_whose_trace_was_not_kept_answers_503(
        app, client, user, support, outage, monkeypatch, caplog):  # noqa: F811
    monkeypatch.setattr(directory, "profile", then(outage, directory.profile))
    answer = client.get(f"{ADMIN}/users/{user.id}", **authorized(support))
    assert answer.status_code == 503, answer.text
    assert user.email not in answer.text
    assert f"event=admin_api:show_user users={user.id}" in caplog.text
    outage.end()
    assert client.get(f"{ADMIN}/users/{user.id}", **authorized(support)).status_code == 200
    assert [e.user_id for e in audit_rows(app, event="admin_api:show_user")] == [user.id]
