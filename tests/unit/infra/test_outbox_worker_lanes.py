"""The outbox's lanes are independent (issue 35): each lane has its own thread in each process, so
a site that hangs never delays a mail, and a mail server that is slow never delays a webhook.
Real threads, a real HTTP receiver that hangs, a mail transport that does not answer; each wait
is a deadline on a condition, and each condition holds while the other lane is still stuck.
(Here for the `receiver` fixture of tests/events/conftest.py; its mirrored place is
tests/unit/infra/test_outbox_worker.py.)"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.domain.accounts import recovery
from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.extensions import db
from app.infra.mail import MemoryTransport
from app.models import Delivery, MailJob
from tests.support.apps import mailing
from tests.support.receiver import Received, Receiver

# How long the stuck lane stays stuck: longer than any deadline here, so that a condition met in
# time was met while the other lane was still waiting.
STUCK_SECONDS = 120.0
DEADLINE_SECONDS = 45.0  # long enough for a machine loaded many times over its cores
CLI = ClientInfo("127.0.0.1", "test", actor="cli")


pytestmark = pytest.mark.app_settings("events")


@pytest.fixture
def settings(settings: dict[str, Any]) -> dict[str, Any]:
    return {**settings, "WEBHOOK_TIMEOUT": STUCK_SECONDS}


class StuckTransport(MemoryTransport):
    """A mail server that takes each message only once `going` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.sending, self.going = threading.Event(), threading.Event()

    def send(self, email: EmailMessage) -> None:
        self.sending.set()
        self.going.wait(STUCK_SECONDS)
        super().send(email)


def _within_deadline(condition: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not (found := condition()):
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_SECONDS:.0f} s"
        time.sleep(0.01)
    return found


def _updated(found: list[Received]) -> bool:
    return any(b"user.updated" in got.body for got in found)


def _statuses(app: Flask, model: Any) -> list[str]:
    with app.app_context():
        try:
            return list(db.session.scalars(select(model.status)))
        finally:
            db.session.remove()


@pytest.fixture
def settled(app: Flask, user: Any, receiver: Receiver) -> Iterator[Any]:
    """The user, with the outbox idle (their user.created delivered)."""
    receiver.wait_for(lambda found: len(found) == 1, DEADLINE_SECONDS)
    assert app.extensions["svc-outbox"].drain(DEADLINE_SECONDS)
    yield user


def test_a_hung_site_never_delays_a_mail(app: Flask, settled: Any, receiver: Receiver) -> None:
    receiver.answering.clear()
    try:
        with app.app_context():
            actions.update(directory.require_user(settled.id), CLI, full_name="Hung")
        receiver.wait_for(_updated, DEADLINE_SECONDS)  # the events lane now waits for an answer
        with app.app_context():
            recovery.request_reset(settled.email, CLI)
        transport = mailing(app).transport
        assert isinstance(transport, MemoryTransport)
        sent = _within_deadline(lambda: transport.sent, "the reset mail")
        assert [m["Subject"] for m in sent] == ["Reset your password"]
        # ... while the site still had not answered: the delivery is still pending.
        assert not receiver.answering.is_set()
        assert "pending" in _statuses(app, Delivery)
    finally:
        receiver.answering.set()


def test_a_mail_backlog_never_delays_a_webhook(app: Flask, settled: Any,
                                               receiver: Receiver) -> None:
    stuck = mailing(app).transport = StuckTransport()
    try:
        with app.app_context():
            for _ in range(3):  # a backlog: the first is being sent, the others wait
                recovery.request_reset(settled.email, CLI)
        _within_deadline(stuck.sending.is_set, "the first mail reaching the mail server")
        with app.app_context():
            actions.update(directory.require_user(settled.id), CLI, full_name="Backlogged")
        receiver.wait_for(_updated, DEADLINE_SECONDS)
        # ... while the mail server had taken none of them.
        assert stuck.sent == []
        assert _statuses(app, MailJob).count("pending") == 3
    finally:
        stuck.going.set()


def test_each_lane_has_a_thread_and_stop_ends_them_all(app: Flask) -> None:
    outbox = app.extensions["svc-outbox"]
    outbox.wake()
    workers = outbox._workers  # this process's, by lane
    assert sorted(workers) == ["events", "mail"]
    threads = [worker.thread for worker in workers.values()]
    assert len({id(thread) for thread in threads}) == 2
    assert all(thread is not None and thread.is_alive() for thread in threads)
    outbox.stop(DEADLINE_SECONDS)
    assert not any(thread is not None and thread.is_alive() for thread in threads)
    outbox.ensure_running()  # a stopped outbox stays stopped
    outbox.wake("mail")
    assert not any(worker.thread is not None and worker.thread.is_alive()
                   for worker in workers.values())
