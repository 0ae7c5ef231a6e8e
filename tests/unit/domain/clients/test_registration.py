"""Registering a webhook endpoint (issue 24): the secret shown once and kept sealed, its rotation
with a day of overlap, and the production rule for where events may go (https, and no loopback,
private or link-local address: at registration and at each delivery, DNS mocked at the
resolver)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select
from standardwebhooks import Webhook

from app.config import DEFAULTS
from app.domain.clients import sites, webhooks
from app.domain.clients.endpoints import UnsafeEndpoint, check_endpoint
from app.extensions import db
from app.models import ClientSite, Delivery
from tests.support.cli import run as cli
from tests.support.settings import change_settings

pytestmark = pytest.mark.app_settings("events")


def secret_of(output):
    return next(line.split()[1] for line in output.splitlines()
                if line.startswith("webhook_secret "))


@pytest.fixture
def notes(app, receiver):
    """A site added with `sites add`, pointed at the receiver with `sites set-webhook`."""
    assert cli(app, "sites", "add", "notes", "--redirect-uri",
               "https://notes.example/cb").exit_code == 0
    result = cli(app, "sites", "set-webhook", "notes", f"{receiver.url}/notes")
    assert result.exit_code == 0, result.output
    return secret_of(result.output)


def test_the_secret_is_shown_once_and_the_database_keeps_it_sealed(app, notes):
    assert notes.startswith("whsec_") and len(Webhook(notes)._whsecret) == 32
    with app.app_context():
        row = db.session.get(ClientSite, "notes")
        assert notes.encode() not in row.webhook_secret_sealed
        assert notes.removeprefix("whsec_").encode() not in row.webhook_secret_sealed
    assert "webhook      http://127.0.0.1:" in cli(app, "sites", "list").output


def test_a_rotated_secret_leaves_the_old_one_signing_for_a_day(app, notes, make_user, receiver,
                                                              clock):
    rotated = secret_of(cli(app, "sites", "rotate-webhook-secret", "notes").output)
    make_user()
    found = receiver.wait_for(lambda r: [x for x in r if x.path == "/notes"])
    delivered = next(x for x in found if x.path == "/notes")
    assert len(delivered.headers["webhook-signature"].split(" ")) == 2
    for secret in (rotated, notes):  # a site that has not switched yet, and one that has
        assert Webhook(secret).verify(delivered.body, delivered.headers)["type"] == "user.created"
    clock.advance(timedelta(days=1, seconds=1).total_seconds())
    with app.app_context():
        site = sites.all_sites()["notes"]
        assert webhooks.endpoint_of(site).secrets == (rotated,)


def test_settings_sites_and_unknown_sites_are_refused(app):
    assert "comes from SVC_CLIENT_SITES" in cli(app, "sites", "set-webhook", "symbols",
                                                 "https://symbols.example/hook").output
    assert "No site called" in cli(app, "sites", "set-webhook", "nobody",
                                   "https://x.example/hook").output
    assert cli(app, "sites", "add", "notes", "--redirect-uri",
               "https://notes.example/cb").exit_code == 0
    # Outside production too: https, or http to this machine only.
    assert "must be https" in cli(app, "sites", "set-webhook", "notes",
                                  "http://notes.example/hook").output


# Production: https only, and never an address of ours --------------------------------------

def test_production_refuses_http_and_our_own_addresses_at_registration(app, dns):
    change_settings(app, ENV="production", checked=False)
    dns |= {"hooks.example": "127.0.0.1", "lan.example": "10.1.2.3",
            "metadata.example": "169.254.169.254", "public.example": "93.184.216.34"}
    with app.app_context():
        for refused in ("http://public.example/hook", "http://127.0.0.1:9/hook",
                        "https://hooks.example/hook", "https://lan.example/hook",
                        "https://metadata.example/hook", "https://[::1]/hook",
                        "https://[::ffff:127.0.0.1]/hook", "https://192.168.0.1/hook"):
            with pytest.raises(UnsafeEndpoint):
                check_endpoint(refused)
        assert check_endpoint("https://public.example/hook")
    assert cli(app, "sites", "add", "notes", "--redirect-uri",
               "https://notes.example/cb").exit_code == 0
    result = cli(app, "sites", "set-webhook", "notes", "https://hooks.example/hook")
    assert result.exit_code != 0 and "loopback, private or link-local" in result.output
    assert "must be https" in cli(app, "sites", "set-webhook", "notes",
                                  "http://public.example/hook").output


def test_production_checks_again_at_delivery_time(app, dns, make_user, receiver):
    """Registered while its name resolved to a public address; by the delivery it resolves to
    127.0.0.1 (where the receiver listens): nothing is sent, and the delivery fails."""
    change_settings(app, ENV="production", checked=False)
    app.extensions["svc-outbox"].lane("events").attempts = 1
    dns["hooks.example"] = "93.184.216.34"
    assert cli(app, "sites", "add", "notes", "--redirect-uri",
               "https://notes.example/cb").exit_code == 0
    port = receiver.url.rsplit(":", 1)[1]
    assert cli(app, "sites", "set-webhook", "notes",
               f"https://hooks.example:{port}/notes").exit_code == 0
    dns["hooks.example"] = "127.0.0.1"  # DNS changed
    make_user()
    deadline_output = ""
    for _ in range(500):  # a deadline of about ten seconds
        deadline_output = cli(app, "events", "list", "--site", "notes", "--status",
                              "failed").output
        if "UnsafeEndpoint" in deadline_output:
            break
        receiver.wait_for(lambda r: True, 0.02)
    assert "user.created -> notes webhook: failed after 1 attempts (UnsafeEndpoint)" \
        in deadline_output
    assert [r for r in receiver.received if r.path == "/notes"] == []
    with app.app_context():
        assert db.session.scalars(select(Delivery.status).where(
            Delivery.site == "notes")).all() == ["failed"]


def test_the_default_retries_span_three_days(app):
    lane = app.extensions["svc-outbox"].lane("events")
    defaults = {"WEBHOOK_ATTEMPTS": 25, "WEBHOOK_RETRY_DELAY": 5.0,
                "WEBHOOK_RETRY_MAX_DELAY": 6 * 3600.0}
    assert {name: DEFAULTS[name] for name in defaults} == defaults
    lane.retry_delay, lane.max_delay = defaults["WEBHOOK_RETRY_DELAY"], 6 * 3600.0
    waited = sum(lane.delay(attempt) for attempt in range(1, defaults["WEBHOOK_ATTEMPTS"]))
    assert 3 * 24 * 3600 <= waited <= 4 * 24 * 3600


def test_sites_add_registers_a_back_channel_logout_uri(app):
    result = cli(app, "sites", "add", "notes", "--redirect-uri", "https://notes.example/cb",
                 "--backchannel-logout-uri", "https://notes.example/logout")
    assert result.exit_code == 0, result.output
    assert "backchannel  https://notes.example/logout" in cli(app, "sites", "list").output
    refused = cli(app, "sites", "add", "other", "--redirect-uri", "https://o.example/cb",
                  "--backchannel-logout-uri", "http://o.example/logout")
    assert refused.exit_code != 0 and "must be https" in refused.output
