"""The outbox is durable (issue 13, item 3): a promised mail is a row, sent once by whichever
worker claims it, through dead processes, several instances, failures and operators' retries."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from sqlalchemy import update
from sqlalchemy.exc import OperationalError

from app.domain.mail.outbox import schedule
from app.extensions import db
from app.infra import lanes, outbox_worker
from app.infra.lanes import MAIL
from app.infra.mail import MemoryTransport
from app.models import MailJob
from tests.support.apps import OUTBOX_DEADLINE_SECONDS, drained, mailing
from tests.support.rows import mail_jobs as jobs

TOKEN = "metrics-secret-123"  # noqa: S105 (a test's metrics token)


@pytest.fixture
def settings():
    return {"METRICS_TOKEN": TOKEN}


def sent_to(app):
    return [m["To"] for m in mailing(app).transport.sent]


def claim(outbox, job_id, worker):
    """`worker` claims the mail job, as a worker thread would."""
    return lanes.claim(outbox.lane(MAIL), job_id, worker, outbox.clock(), outbox.lease)


def notices(app, count):
    """`count` password-changed notices, promised in one transaction."""
    with app.app_context():
        for index in range(count):
            schedule(MailJob.PASSWORD_CHANGED, {"to": f"user{index}@example.com"})
        db.session.commit()


def test_mail_promised_by_a_process_that_died_is_sent_by_the_next(app, client, make_user,
                                                                     next_app):
    """40 forgot-password answers, then the process is gone before its worker sent anything
    (kill -9, a recycled worker): the next process sends every mail."""
    app.extensions["svc-outbox"].stop()  # this process's worker never runs
    addresses = [make_user(f"user{index}@example.com").email for index in range(8)]
    for address in addresses * 5:
        assert client.post("/api/v2/auth/forgot-password",
                           json={"email": address}).status_code == 202
    assert [j.status for j in jobs(app)] == ["pending"] * 40
    assert sent_to(app) == []

    restarted = next_app()
    drained(restarted.extensions["svc-outbox"])
    assert sorted(sent_to(restarted)) == sorted(addresses * 5)
    assert {j.status for j in jobs(app)} == {"sent"}


def test_a_job_claimed_by_a_process_that_died_is_sent_after_its_lease(
        app, client, user, next_app):
    dead = app.extensions["svc-outbox"]
    dead.stop()
    dead.lease = timedelta(seconds=0.5)
    client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    [job] = jobs(app)
    other = next_app()  # built first: on PostgreSQL that may take longer than the lease
    claimed = time.monotonic()  # before the claim, which sets the lease from its own clock
    with app.app_context():
        assert claim(dead, job.id, "dead-host:1:0") is not None  # then it died

    drained(other.extensions["svc-outbox"])
    assert time.monotonic() - claimed >= 0.45  # it waited for the lease to end
    assert sent_to(other) == [user.email]
    [job] = jobs(app)
    assert (job.status, job.attempts, job.claimed_by) == ("sent", 2, None)


def test_a_claim_is_won_by_one_worker_only(app, next_app):
    notices(app, 1)
    app.extensions["svc-outbox"].stop()
    [job] = jobs(app)
    other = next_app()
    other.extensions["svc-outbox"].stop()
    with app.app_context():
        first = claim(app.extensions["svc-outbox"], job.id, "a")
    with other.app_context():
        second = claim(other.extensions["svc-outbox"], job.id, "b")
    assert first is not None and second is None


class SlowTransport(MemoryTransport):
    """A mail server that takes a little while: the instances' claims overlap."""

    def send(self, email):  # type: ignore[no-untyped-def]
        time.sleep(0.01)
        super().send(email)


def test_two_instances_on_one_database_send_each_mail_once(app, next_app):
    other = next_app()
    for each in (app, other):
        mailing(each).transport = SlowTransport()
    notices(app, 60)
    drained = []
    threads = [threading.Thread(target=lambda a=a: drained.append(
        a.extensions["svc-outbox"].drain(OUTBOX_DEADLINE_SECONDS))) for a in (app, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert drained == [True, True]
    mine, theirs = sent_to(app), sent_to(other)
    assert sorted(mine + theirs) == sorted(f"user{index}@example.com" for index in range(60))
    assert mine and theirs  # the work was shared
    assert {j.status for j in jobs(app)} == {"sent"}


def connection_lost() -> OperationalError:
    return OperationalError("UPDATE mail_jobs", {}, Exception("server closed the connection"))


def test_a_send_the_database_could_not_record_is_recorded_later_not_sent_again(
        app, monkeypatch):
    outbox = app.extensions["svc-outbox"]
    outbox.poll_seconds = 0.05  # how soon it looks again after a database error
    record, failures = lanes.record, [connection_lost()]

    def unreachable_once(*args):  # type: ignore[no-untyped-def]
        if failures:
            raise failures.pop()
        return record(*args)

    monkeypatch.setattr(outbox_worker, "record", unreachable_once)
    notices(app, 1)
    drained(outbox)
    assert sent_to(app) == ["user0@example.com"]
    [job] = jobs(app)
    assert (job.status, job.attempts) == ("sent", 1)


def test_a_database_error_while_making_the_mail_is_retried(app):
    outbox, mail = app.extensions["svc-outbox"], mailing(app)
    make, failures = mail.handlers[MailJob.PASSWORD_CHANGED], [connection_lost()]

    def unreachable_once(job):  # type: ignore[no-untyped-def]
        if failures:
            raise failures.pop()
        return make(job)

    mail.handlers = {**mail.handlers, MailJob.PASSWORD_CHANGED: unreachable_once}
    notices(app, 1)
    drained(outbox)
    assert sent_to(app) == ["user0@example.com"]
    [job] = jobs(app)
    assert (job.status, job.attempts, job.last_error) == ("sent", 2, "OperationalError")


class FailingTransport(MemoryTransport):
    def __init__(self) -> None:
        super().__init__()
        self.down = True

    def send(self, email):  # type: ignore[no-untyped-def]
        if self.down:
            raise ConnectionRefusedError("nothing listens there")
        super().send(email)


class TestAttemptsRunOut:
    @pytest.fixture
    def settings(self):
        return {"MAIL_ATTEMPTS": 3, "MAIL_RETRY_DELAY": 0.01, "METRICS_TOKEN": TOKEN}

    def test_a_failed_job_is_visible_and_retry_sends_it(self, app, client, user, caplog):
        outbox, mail = app.extensions["svc-outbox"], mailing(app)
        mail.transport = transport = FailingTransport()
        client.post("/api/v2/auth/forgot-password", json={"email": user.email})
        drained(outbox)
        [job] = jobs(app)
        assert (job.status, job.attempts, job.last_error) == (
            "failed", 3, "ConnectionRefusedError")
        assert job.payload["email"] == user.email  # kept, to be sent when retried
        runner = app.test_cli_runner()
        status = runner.invoke(args=["outbox", "status"])
        assert "pending 0, sent 0, skipped 0, failed 1" in status.output
        assert f"failed {job.id} reset_password after 3 attempts (ConnectionRefusedError)" \
            in status.output
        metrics = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
        assert 'svc_auth_mail_jobs{status="failed"} 1.0' in metrics
        assert 'svc_auth_mail_jobs{status="pending"} 0.0' in metrics

        transport.down = False  # the mail server is back
        assert "0 mail jobs are due now" in runner.invoke(args=["outbox", "retry"]).output
        assert "1 mail jobs are due now" in runner.invoke(
            args=["outbox", "retry", "--failed"]).output
        drained(outbox)
        assert sent_to(app) == [user.email]
        [job] = jobs(app)
        assert (job.status, job.payload) == ("sent", {})  # nothing of the request is kept


def test_a_mail_server_down_then_up_is_retried_with_backoff(app, client, user, caplog):
    caplog.set_level("INFO")
    outbox = app.extensions["svc-outbox"]
    outbox.lane(MAIL).retry_delay = 0.1
    mailing(app).transport = transport = FailingTransport()
    client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    outbox.wake()
    deadline = time.monotonic() + 10
    while len(attempts := [r for r in caplog.records if "delivery attempt" in r.getMessage()]) < 3:
        assert time.monotonic() < deadline, "three failed attempts"
        time.sleep(0.01)
    transport.down = False
    drained(outbox)
    assert sent_to(app) == [user.email]
    times = [r.created for r in attempts[:3]]
    assert times[1] - times[0] >= 0.09 and times[2] - times[1] >= 0.19  # 0.1 s, then doubled
    [job] = jobs(app)
    assert job.status == "sent" and job.attempts >= 4


def test_pending_jobs_show_in_the_metrics_and_status(app, client):
    app.extensions["svc-outbox"].stop()
    notices(app, 2)
    metrics = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert 'svc_auth_mail_jobs{status="pending"} 2.0' in metrics
    assert "svc_auth_mail_oldest_pending_seconds" in metrics
    output = app.test_cli_runner().invoke(args=["outbox", "status"]).output
    assert "pending 2, sent 0" in output and "oldest pending job promised at" in output


def test_purge_deletes_finished_jobs_past_the_retention(app):
    notices(app, 3)
    drained(app.extensions["svc-outbox"])
    [old, recent, failed] = jobs(app)
    with app.app_context():
        long_ago = old.finished_at - timedelta(days=8)
        db.session.execute(update(MailJob).where(MailJob.id.in_([old.id, failed.id]))
                           .values(finished_at=long_ago))
        db.session.execute(update(MailJob).where(MailJob.id == failed.id)
                           .values(status="failed"))
        db.session.commit()
    runner = app.test_cli_runner()
    assert "Deleted 1 mail jobs finished over 7 days ago" in runner.invoke(
        args=["outbox", "purge"]).output
    assert {j.id for j in jobs(app)} == {recent.id, failed.id}
    assert "Deleted 1 mail jobs" in runner.invoke(args=["outbox", "purge", "--failed"]).output
    assert [j.id for j in jobs(app)] == [recent.id]
