"""Idempotency-Key on every admin API write (issue 33, findings 12 and 17): PATCH and DELETE
honour it as POST does (a repeat answers the first answer and acts once; another body with the
key is refused), and two requests with one key at the same moment act once: the second gets the
first answer, never 409 `email_taken` (tests/support/races.py, on SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from app.domain.admin import actions
from app.extensions import db
from app.models import AuditEvent, User
from tests.support import admin, races
from tests.support.admin import authorized

ADMIN = "/api/admin/v1"
EVERY_SCOPE = ("users:read", "users:write", "users:plan", "sessions:revoke", "audit:read")


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", *EVERY_SCOPE))


def keyed(token, key):
    return authorized(token, **{"Idempotency-Key": key})


def audited(app, event):
    with app.app_context():
        return db.session.scalar(select(func.count()).select_from(AuditEvent).where(
            AuditEvent.event == event))


def test_a_patch_repeat_answers_the_first_answer_and_does_not_undo_a_later_change(
        app, client, user, support):
    first = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"},
                         **keyed(support, "plan-41"))
    assert first.status_code == 200 and "Idempotent-Replayed" not in first.headers
    other_body = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "team"},
                              **keyed(support, "plan-41"))
    assert other_body.status_code == 422
    assert other_body.get_json()["code"] == "idempotency_key_reused"
    later = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "team"}, **authorized(support))
    assert later.status_code == 200
    repeat = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"},
                          **keyed(support, "plan-41"))
    assert repeat.status_code == 200 and repeat.headers["Idempotent-Replayed"] == "true"
    assert repeat.get_json() == first.get_json()
    with app.app_context():
        assert db.session.get(User, user.id).plan == "team"  # the retry changed nothing
    assert audited(app, "plan_changed") == 2


def test_a_malformed_key_on_a_patch_is_refused(client, user, support):
    refused = client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"},
                           **keyed(support, "caf\u00e9"))
    assert refused.status_code == 400
    assert refused.get_json()["code"] == "invalid_idempotency_key"


def test_ending_sessions_again_with_the_key_ends_none_of_the_new_ones(client, user, login,
                                                                      support):
    login(user)
    first = client.delete(f"{ADMIN}/users/{user.id}/sessions", **keyed(support, "end-1"))
    assert first.get_json() == {"sessions_ended": 1}
    tokens = login(user)
    repeat = client.delete(f"{ADMIN}/users/{user.id}/sessions", **keyed(support, "end-1"))
    assert repeat.get_json() == {"sessions_ended": 1}
    assert repeat.headers["Idempotent-Replayed"] == "true"
    assert client.get("/api/v2/auth/verify", headers={
        "Authorization": f"Bearer {tokens['access_token']}"}).status_code == 200


def test_delete_and_clear_factors_replay_too(app, client, user, support):
    cleared = client.delete(f"{ADMIN}/users/{user.id}/factors", **keyed(support, "mfa-1"))
    again = client.delete(f"{ADMIN}/users/{user.id}/factors", **keyed(support, "mfa-1"))
    assert cleared.status_code == again.status_code == 204
    assert again.headers["Idempotent-Replayed"] == "true" and again.data == b""
    deleted = client.delete(f"{ADMIN}/users/{user.id}", **keyed(support, "close-1"))
    repeat = client.delete(f"{ADMIN}/users/{user.id}", **keyed(support, "close-1"))
    assert deleted.status_code == repeat.status_code == 202
    assert repeat.get_json() == deleted.get_json()
    assert repeat.headers["Idempotent-Replayed"] == "true"
    other_path = client.delete(f"{ADMIN}/users/{user.id}/sessions", **keyed(support, "close-1"))
    assert other_path.status_code == 422
    assert audited(app, "deletion_scheduled") == 1


def test_the_openapi_document_says_every_write_takes_the_key(client):
    paths = client.get("/api/openapi.json").get_json()["paths"]
    writes = [(path, method, operation) for path, item in paths.items()
              if path.startswith(ADMIN) for method, operation in item.items()
              if method in ("post", "patch", "delete")]
    assert len(writes) == 9
    for path, method, operation in writes:
        names = [p["name"] for p in operation.get("parameters", [])]
        assert "Idempotency-Key" in names, (path, method)
        assert "Every write takes an `Idempotency-Key`" in operation["description"]
        assert {"400", "409", "422"} <= set(operation["responses"]), (path, method)


class TestAtOnce:
    """Requests with one key sent together, each on a connection of its own, with the creation
    held until every request has reached it or been answered (tests/support/races.py)."""

    @pytest.fixture
    def settings(self):
        return {**races.POOL}

    def test_creations_with_one_key_create_once_and_answer_alike(self, app, support,
                                                                 monkeypatch, mailbox):
        body = {"email": "once@example.com", "full_name": "Once"}
        with races.burst(monkeypatch, actions, "create_invited", size=8) as burst:
            answers = burst.send(lambda _: app.test_client().post(
                f"{ADMIN}/users", json=body, **keyed(support, "signup-7")))
        assert burst.checked == 1
        assert races.statuses(answers) == [201] * 8, [a.get_json() for a in answers]
        assert len({a.get_json()["id"] for a in answers}) == 1
        assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 7
        with app.app_context():
            assert db.session.scalar(select(func.count()).select_from(User)) == 1
        assert audited(app, "account_created") == 1
        assert len(mailbox.to("once@example.com")) == 1

    def test_another_body_with_the_key_at_once_is_refused(self, app, support, monkeypatch):
        with races.burst(monkeypatch, actions, "create_invited", size=6) as burst:
            answers = burst.send(lambda i: app.test_client().post(
                f"{ADMIN}/users", json={"email": f"n{i}@example.com"},
                **keyed(support, "signup-8")))
        assert races.statuses(answers) == [201] + [422] * 5
        assert {a.get_json()["code"] for a in answers if a.status_code == 422} == {
            "idempotency_key_reused"}
        with app.app_context():
            assert db.session.scalar(select(func.count()).select_from(User)) == 1
