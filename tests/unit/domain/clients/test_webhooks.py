"""Webhooks to client sites (issue 24): every account event reaches the sites that may know the
account, after the change, signed by the Standard Webhooks specification (verified here with the
`standardwebhooks` package), at least once through failures and dead workers."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from sqlalchemy import select
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.domain.clock import system_clock
from app.extensions import db
from app.infra import lanes
from app.models import AccountEvent, ConsentGrant, Delivery
from tests.support.apps import build_app, dispose_app, drained
from tests.support.events import OUTSIDER_SECRET, SECRET

pytestmark = pytest.mark.app_settings("events")

CLI = ClientInfo(actor="cli")


def verified(received, secret=SECRET):
    return [Webhook(secret).verify(r.body, r.headers) for r in received]


def types_for(received, user_id):
    return [e["type"] for e in verified(received) if e["data"]["user_id"] == user_id]


def at(path):
    return lambda found: [r for r in found if r.path == path]


def test_each_event_type_arrives_after_its_change_and_verifies(app, client, user, login,
                                                              receiver):
    login(user)
    with app.app_context():
        account = directory.require_user(user.id)
        actions.update(account, CLI, plan="pro")
        actions.disable(account, CLI)
        actions.enable(account, CLI)
    expected = ["user.created", "user.updated", "user.disabled", "sessions.ended",
                "user.enabled"]
    found = receiver.wait_for(lambda r: len(r) >= len(expected))
    assert all(r.path == "/symbols" for r in found)  # the outsider has no consent
    events = sorted(verified(found), key=lambda e: (e["occurred_at"], expected.index(e["type"])))
    assert [e["type"] for e in events] == expected
    assert events[1]["data"] == {"user_id": user.id, "changed": ["plan"], "plan": "pro"}
    assert events[3]["data"]["reason"] == "account_disabled"
    first = found[0]
    body = json.loads(first.body)
    assert set(body) == {"type", "id", "timestamp", "occurred_at", "sequence", "data"}
    assert first.headers["webhook-id"] == body["id"]
    assert first.headers["webhook-signature"].startswith("v1,")
    with app.app_context():  # each was written before it was delivered: the change came first
        stored = {e.id: e.type for e in db.session.scalars(select(AccountEvent))}
    assert {e["id"]: e["type"] for e in events} == stored


def test_a_tampered_body_or_a_foreign_secret_fails_verification(app, user, receiver):
    first = receiver.wait_for(lambda r: len(r) >= 1)[0]
    tampered = first.body.replace(b"user.created", b"user.deleted")
    with pytest.raises(WebhookVerificationError):
        Webhook(SECRET).verify(tampered, first.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(OUTSIDER_SECRET).verify(first.body, first.headers)


def test_a_site_down_three_times_gets_the_event_once_it_is_back(app, make_user, receiver):
    receiver.statuses = [500, 500, 500]
    make_user()  # user.created
    found = receiver.wait_for(lambda r: len(r) >= 4)
    ids = {r.headers["webhook-id"] for r in found}
    assert len(ids) == 1  # every retry with the same webhook-id
    assert all(len(verified([r])) == 1 for r in found)
    event_id = ids.pop()
    _wait_until(app, lambda: _statuses(app) == ["sent"])
    with app.app_context():
        delivery = db.session.scalars(select(Delivery)).one()
    assert (delivery.event_id, delivery.attempts) == (event_id, 4)
    listed = app.test_cli_runner().invoke(args=["events", "list", "--site", "symbols"])
    assert f"{event_id} user.created -> symbols webhook: sent after 4 attempts" in listed.output


def test_a_worker_dead_mid_delivery_loses_nothing_and_the_retry_has_the_same_id(
        app, make_user, receiver, tmp_path, clock, settings, database_url):
    """A delivery claimed and sent, and the worker dies before recording it: once the lease is
    over, the next process's worker sends it again, with the same webhook-id."""
    outbox = app.extensions["svc-outbox"]
    outbox.stop()  # this process's worker is the one that dies
    make_user()
    lane = outbox.lane("events")
    with app.app_context():
        lane.feed(system_clock())  # the fan-out
        delivery_id = db.session.scalars(select(Delivery.id)).one()
        job = lanes.claim(lane, delivery_id, "dead-host:1:0", system_clock(), outbox.lease)
        assert job is not None
        assert lanes.attempt(lane, job).status == "sent"  # never recorded
        db.session.remove()
    assert len(receiver.received) == 1
    other = build_app(tmp_path / "next", clock, settings, database_url)
    try:
        later = other.extensions["svc-outbox"]
        later.clock = lambda: system_clock() + later.lease + timedelta(seconds=1)
        drained(later)
        found = receiver.wait_for(lambda r: len(r) >= 2)
    finally:
        dispose_app(other)
    assert found[0].headers["webhook-id"] == found[1].headers["webhook-id"]
    assert verified(found)[0] == verified(found)[1]
    with app.app_context():
        assert db.session.get(Delivery, delivery_id).status == "sent"


def test_a_third_party_client_hears_only_of_accounts_that_consented(app, make_user, receiver):
    ada, bob = make_user("ada@example.com"), make_user("bob@example.com")
    with app.app_context():
        db.session.add(ConsentGrant(user_id=ada.id, client_id="outsider",
                                    scope="openid profile", granted_at=system_clock()))
        db.session.commit()
        for account in (ada, bob):
            actions.update(directory.require_user(account.id), CLI, full_name="Renamed")
    found = receiver.wait_for(lambda r: len(at("/symbols")(r)) >= 4 and any(
        b"user.updated" in got.body for got in at("/outsider")(r)))
    outsider = [Webhook(OUTSIDER_SECRET).verify(r.body, r.headers)
                for r in found if r.path == "/outsider"]
    # Consent is looked at when the event is fanned out: ada's user.created may have been
    # before or after it. Never one of bob's.
    assert {e["data"]["user_id"] for e in outsider} == {ada.id}
    assert "user.updated" in [e["type"] for e in outsider]
    assert sorted(types_for([r for r in found if r.path == "/symbols"], bob.id)) == [
        "user.created", "user.updated"]


def test_the_fan_out_is_idempotent(app, make_user):
    app.extensions["svc-outbox"].stop()
    make_user()
    lane = app.extensions["svc-outbox"].lane("events")
    with app.app_context():
        assert lane.feed(system_clock()) == 1
        assert lane.feed(system_clock()) == 0  # already dispatched
        assert db.session.scalar(select(AccountEvent.dispatched_at)) is not None
        assert len(db.session.scalars(select(Delivery)).all()) == 1  # symbols; no consent


def test_events_retry_puts_failed_deliveries_back(app, make_user, receiver):
    lane = app.extensions["svc-outbox"].lane("events")
    lane.attempts, receiver.statuses = 1, [503]
    make_user()
    receiver.wait_for(lambda r: len(r) >= 1)
    runner = app.test_cli_runner()
    _wait_until(app, lambda: "failed" in runner.invoke(args=["events", "list", "--status",
                                                             "failed"]).output)
    assert "(Refused)" in runner.invoke(args=["events", "list"]).output
    assert "1 deliveries are due now." in runner.invoke(
        args=["events", "retry", "--failed"]).output
    app.extensions["svc-outbox"].wake()
    found = receiver.wait_for(lambda r: len(r) >= 2)
    assert found[0].headers["webhook-id"] == found[1].headers["webhook-id"]


def _wait_until(app, condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.02)


def _statuses(app):
    with app.app_context():
        try:
            return db.session.scalars(select(Delivery.status)).all()
        finally:
            db.session.remove()


def test_leaving_and_erasure_reach_the_site_without_personal_data(app, client, clock,
                                                                  make_user, login, receiver):
    from app.domain import retention
    person = make_user("leaving.person@example.com", full_name="Ottilie Leaving")
    tokens = login(person)
    client.delete("/api/v2/auth/account", json={"password": person.password},
                  headers={"Authorization": f"Bearer {tokens['access_token']}"})
    receiver.wait_for(lambda r: "user.deletion_scheduled" in types_for(r, person.id))
    clock.advance(timedelta(days=app.config["ACCOUNT_DELETION_GRACE_DAYS"] + 1).total_seconds())
    with app.app_context():
        for step in retention.STEPS:
            step.run()
    found = receiver.wait_for(lambda r: "user.deleted" in types_for(r, person.id))
    kinds = types_for(found, person.id)
    assert kinds.index("user.deletion_scheduled") < kinds.index("user.deleted")
    deleted = next(e for e in verified(found) if e["type"] == "user.deleted")
    assert deleted["data"] == {"user_id": person.id}
    assert "Ottilie" not in json.dumps(deleted) and "leaving.person" not in json.dumps(deleted)
