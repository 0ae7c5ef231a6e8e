"""An erasure and the account's events not yet delivered (issue 33, finding 18): they lose the
person's address and name, and keep what a site needs to act on them (the account, the kind of
change, its place in the account's sequence); the example site takes them (204), where it
answered 500 to `data: {}` for three days of retries."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from sqlalchemy import select

from app.domain import retention
from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.domain.clock import system_clock
from app.domain.lifecycle import leaving
from app.extensions import db
from app.models import AccountEvent, Delivery
from tests.support.apps import build_app, dispose_app, drained
from tests.support.events import SECRET

pytestmark = pytest.mark.app_settings("events")

CLI = ClientInfo(actor="cli")


@pytest.fixture
def example(example_site):
    return example_site


@pytest.fixture
def settings(example):
    site = {"redirect_uris": ["http://127.0.0.1:8001/auth/callback"],
            "webhook_url": f"{example[1]}/webhooks/svc-auth", "webhook_secret": SECRET}
    return {"WEBHOOK_RETRY_DELAY": 0.05, "PLANS": "free,pro", "DEFAULT_PLAN": "free",
            "CLIENT_SITES": {"symbols": site}}


def test_undelivered_events_keep_what_a_site_needs_and_lose_the_person(
        app, make_user, clock, tmp_path, settings, database_url, example):
    outbox = app.extensions["svc-outbox"]
    outbox.stop()  # the site is unreachable: nothing is delivered until after the erasure
    person = make_user("ottilie@example.com", full_name="Ottilie Leaving")
    with app.app_context():
        actions.update(directory.require_user(person.id), CLI, full_name="Ottilie L.",
                       plan="pro")
        outbox.lane("events").feed(system_clock())  # these two have their deliveries already
        leaving.schedule_deletion(directory.require_user(person.id), CLI)
    clock.advance(timedelta(days=app.config["ACCOUNT_DELETION_GRACE_DAYS"] + 1).total_seconds())
    with app.app_context():
        for step in retention.STEPS:
            step.run()
        kept = {event.type: (event.sequence, event.data) for event in db.session.scalars(
            select(AccountEvent).where(AccountEvent.user_id == person.id))}
        stored = [delivery.data for delivery in db.session.scalars(select(Delivery))]
    assert kept["user.created"] == (1, {"plan": "free"})
    assert kept["user.updated"] == (2, {"changed": ["full_name", "plan"], "plan": "pro"})
    assert "user.deleted" in kept
    assert "Ottilie" not in json.dumps(stored) and "ottilie@" not in json.dumps(stored)

    later = build_app(tmp_path / "next", clock, settings, database_url)  # the site is back
    try:
        with later.app_context():
            later.extensions["svc-outbox"].lane("events").feed(system_clock())
        drained(later.extensions["svc-outbox"])
        with later.app_context():
            statuses = {d.status for d in db.session.scalars(select(Delivery))}
    finally:
        dispose_app(later)
    assert statuses == {"sent"}  # the example answered 204 to each, none is retried
    site = example[0]
    profile = site.extensions["client_site_store"].profiles[person.id]
    assert profile.deleted and profile.values == {}
