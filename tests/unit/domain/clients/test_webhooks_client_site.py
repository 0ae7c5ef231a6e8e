"""The example client site (examples/client_site) hears the service's webhooks through the
Python helper's one-line verifier: user.updated changes what it shows of the person,
user.deleted makes it forget them; a body the service did not sign is a 400."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook

from app.domain import events
from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.domain.events import EventType
from app.extensions import db
from tests.support.events import SECRET

pytestmark = pytest.mark.app_settings("events")


@pytest.fixture
def site(example_site):
    return example_site


@pytest.fixture
def settings(site):
    return {"WEBHOOK_RETRY_DELAY": 0.05, "CLIENT_SITES": {"symbols": {
        "redirect_uris": ["http://127.0.0.1:8001/auth/callback"],
        "webhook_url": f"{site[1]}/webhooks/svc-auth", "webhook_secret": SECRET}}}


def until(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.02)


def test_the_example_site_follows_updates_and_forgets_deleted_accounts(app, site, user):
    example, _ = site
    store = example.extensions["client_site_store"]
    with store.lock:
        store.comments["sym-led"] = [{"by": user.id, "text": "bright"},
                                     {"by": "someone-else", "text": "dim"}]
        store.ratings["sym-led"] = {user.id: 5, "someone-else": 3}
    with app.app_context():
        actions.update(directory.require_user(user.id), ClientInfo(actor="cli"),
                       full_name="Ada L.", plan="pro")
    until(lambda: user.id in store.profiles and {"full_name": "Ada L.", "plan": "pro"}.items()
          <= store.profiles[user.id].values.items())
    with app.app_context():  # what the deletion (another part of issue 24) will emit
        events.emit(EventType.USER_DELETED, user.id)
        db.session.commit()
    until(lambda: store.profiles[user.id].deleted)
    assert store.profiles[user.id].values == {}
    assert store.comments["sym-led"] == [{"by": "someone-else", "text": "dim"}]
    assert store.ratings["sym-led"] == {"someone-else": 3}


def test_a_body_the_service_did_not_sign_is_refused(site):
    example, _ = site
    body = '{"type":"user.deleted","data":{"user_id":"u-1"}}'
    at = datetime.now(UTC)
    headers = {"webhook-id": "evt_1", "webhook-timestamp": str(int(at.timestamp()))}
    signed = Webhook(SECRET).sign("evt_1", at, body)
    client = example.test_client()
    tampered = body.replace("u-1", "u-2")
    assert client.post("/webhooks/svc-auth", data=tampered,
                       headers={**headers, "webhook-signature": signed}).status_code == 400
    assert client.post("/webhooks/svc-auth", data=body,
                       headers={**headers, "webhook-signature": signed}).status_code == 204
