"""Events in order per account (issue 33, finding 15): deliveries arrive in any order (retries,
concurrent changes), so every event carries its place in its account's `sequence`, given in the
order the changes commit, even when they are concurrent; a site that applies only newer state
(the Python helper's AccountState, the example site) ends with the service's state whatever
order the events came in."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select
from standardwebhooks import Webhook

from app.domain.clock import system_clock
from app.extensions import db
from app.models import AccountEvent, User
from tests.support import admin
from tests.support.admin import authorized
from tests.support.api import all_at_once
from tests.support.apps import drained
from tests.support.events import SECRET, example_app
from tests.support.receiver import Receiver

ADMIN = "/api/admin/v1"
PLANS = ("free", "pro", "team")
CALLS = 16


@pytest.fixture
def receiver():
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def settings(receiver):
    return {"WEBHOOK_RETRY_DELAY": 0.05, "PLANS": ",".join(PLANS), "DEFAULT_PLAN": "free",
            "CLIENT_SITES": {"symbols": {
                "redirect_uris": ["http://127.0.0.1:8001/auth/callback"],
                "webhook_url": f"{receiver.url}/symbols", "webhook_secret": SECRET}}}


@pytest.fixture
def example():
    return example_app()


def concurrent_admin_calls(app, user_id, token):
    """CALLS admin calls on one account at once: plan changes, disables and enables."""
    def call(index):
        client = app.test_client()
        if index % 4 == 3:
            action = "disable" if index % 8 == 3 else "enable"
            return client.post(f"{ADMIN}/users/{user_id}/{action}", **authorized(token))
        return client.patch(f"{ADMIN}/users/{user_id}", json={"plan": PLANS[index % 3]},
                            **authorized(token))
    answers = all_at_once(CALLS, call)
    assert {answer.status_code for answer in answers} == {200}


def delivered(app, receiver):
    outbox = app.extensions["svc-outbox"]
    with app.app_context():
        outbox.lane("events").feed(system_clock())
    drained(outbox)
    return list(receiver.received)


def test_concurrent_changes_are_numbered_in_the_order_they_commit(app, client, make_user,
                                                                  receiver, example):
    ada, bob = make_user("ada@example.com"), make_user("bob@example.com")
    token = admin.token(client, admin.register(app, "support", "users:write", "users:plan"))
    concurrent_admin_calls(app, ada.id, token)
    client.patch(f"{ADMIN}/users/{bob.id}", json={"plan": "team"}, **authorized(token))
    with app.app_context():
        stored = db.session.get(User, ada.id)
        final = {"plan": stored.plan, "disabled": stored.disabled_at is not None}
        events = db.session.scalars(select(AccountEvent).where(AccountEvent.user_id == ada.id)
                                    .order_by(AccountEvent.sequence)).all()
        bobs = db.session.scalars(select(AccountEvent.sequence)
                                  .where(AccountEvent.user_id == bob.id)).all()
    # One number each, none skipped, whatever the concurrency; each account its own.
    assert [event.sequence for event in events] == list(range(1, len(events) + 1))
    assert sorted(bobs) == [1, 2]
    # The last change to commit is the one the account shows, and it has the highest number.
    plans = [event.data["plan"] for event in events if event.type == "user.updated"]
    switches = [event.type for event in events if event.type in ("user.disabled",
                                                                 "user.enabled")]
    assert plans[-1] == final["plan"]
    assert switches and (switches[-1] == "user.disabled") == final["disabled"]

    # The example site, sent every delivery in reverse and in a random order, shows it.
    received = [r for r in delivered(app, receiver) if r.path == "/symbols"]
    bodies = [Webhook(SECRET).verify(r.body, r.headers) for r in received]
    assert sorted(b["sequence"] for b in bodies if b["data"]["user_id"] == ada.id) == [
        event.sequence for event in events]
    for order in (list(reversed(received)), random.sample(received, len(received))):
        site = example.test_client()
        example.extensions["client_site_store"].profiles.clear()
        for r in order:
            headers = {k: v for k, v in r.headers.items() if k.startswith("webhook-")}
            assert site.post("/webhooks/svc-auth", data=r.body, headers={
                **headers, "content-type": "application/json"}).status_code == 204
        shown = example.extensions["client_site_store"].profiles[ada.id].values
        assert {"plan": shown["plan"], "disabled": shown["disabled"]} == final
        assert example.extensions["client_site_store"].profiles[bob.id].values["plan"] == "team"


def test_a_change_rolled_back_leaves_no_event_and_the_next_takes_the_next_number(app, user):
    from app.db.transactions import writes
    from app.domain import events
    from app.domain.events import EventType

    @writes
    def refused():
        events.emit(EventType.USER_UPDATED, user.id, {"changed": ["plan"], "plan": "pro"})
        raise RuntimeError("refused")

    @writes
    def with_a_savepoint_undone():
        events.emit(EventType.USER_DISABLED, user.id)
        with pytest.raises(RuntimeError), db.session.begin_nested():
            events.emit(EventType.USER_UPDATED, user.id, {"changed": ["plan"], "plan": "pro"})
            raise RuntimeError("undone")
        events.emit(EventType.USER_ENABLED, user.id)

    with app.app_context():
        with pytest.raises(RuntimeError):
            refused()
        with_a_savepoint_undone()
        numbered = db.session.execute(select(AccountEvent.type, AccountEvent.sequence)
                                      .where(AccountEvent.user_id == user.id)
                                      .order_by(AccountEvent.sequence)).all()
    # The refused change took no number; the savepoint's event is gone, its number skipped.
    assert [tuple(row) for row in numbered] == [("user.created", 1), ("user.disabled", 2),
                                                 ("user.enabled", 4)]
