"""The outbox's worker: each process's thread that claims due jobs, does them and records the
outcome. A claim is a lease won by a conditional UPDATE: one worker does a job, and a dead
worker's job comes due again. The jobs are in lanes, one table each with the lease columns
(app/models/leased_job.py): mail, and the deliveries of account events to client sites.
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

import atexit
import logging
import os
import smtplib
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask, current_app
from sqlalchemy import func, select, update
from sqlalchemy.exc import SQLAlchemyError

from app.db.rows import changed
from app.db.transactions import until_commit, writes
from app.extensions import db
from app.infra.lanes import Handler, Job, Lane
from app.infra.mail import Transport, sender_for, transport_for
from app.models import MailJob
from app.models.leased_job import LeasedJob

log = logging.getLogger("svc_auth.mail")


def _system_clock() -> datetime:  # the outbox runs on the real clock, whatever the app's says
    return datetime.now(UTC)


EXIT_WAIT_SECONDS = 10.0  # how long an exiting process waits for the job it is sending
ERROR_WAIT_MAX = 30.0  # the longest pause between looks while the database cannot be reached
_WAKE_AFTER_COMMIT = "svc_outbox_wake"


@dataclass(frozen=True)
class _Outcome:
    status: str  # LeasedJob.SENT, SKIPPED, FAILED, or PENDING (try again after `delay`)
    error: str | None = None
    delay: float = 0.0


@dataclass
class _Worker:
    """The thread of one process, and what it knows that the database does not yet."""

    name: str
    thread: threading.Thread | None = None
    wake: threading.Event = field(default_factory=threading.Event)
    unrecorded: dict[tuple[Lane, str], _Outcome] = field(default_factory=dict)


class Outbox:
    """The jobs of one app, in lanes (mail first): the worker thread of this process, and the
    work it does."""

    def __init__(self, app: Flask, transport: Transport, handlers: Mapping[str, Handler], *,
                 sender: str, attempts: int, retry_delay: float, poll_seconds: float,
                 lease_seconds: float, clock: Callable[[], datetime] = _system_clock,
                 lanes: tuple[Lane, ...] = ()) -> None:
        self.app, self.transport, self.handlers, self.sender = app, transport, handlers, sender
        self.mail = Lane("mail", MailJob, self._send_mail, max(1, attempts), retry_delay,
                         expected_failures=(OSError, smtplib.SMTPException),
                         done_values={"payload": {}, "token_sealed": None})
        self.lanes = (self.mail, *lanes)
        self.poll_seconds, self.lease = poll_seconds, timedelta(seconds=lease_seconds)
        self.clock = clock
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._pid = -1
        self._worker = _Worker("")

    @property
    def retry_delay(self) -> float:
        return self.mail.retry_delay

    @retry_delay.setter
    def retry_delay(self, seconds: float) -> None:
        self.mail.retry_delay = seconds

    def lane(self, name: str) -> Lane:
        return next(lane for lane in self.lanes if lane.name == name)

    # The thread ----------------------------------------------------------------------------

    def ensure_running(self) -> None:
        """Start this process's worker thread unless it runs (cheap: every request calls it)."""
        thread = self._worker.thread
        if thread is not None and thread.is_alive() and self._pid == os.getpid():
            return
        if self._pid != os.getpid():  # a fork: nothing of the parent's thread is ours
            self._lock, self._pid = threading.Lock(), os.getpid()
            self._worker = _Worker(f"{socket.gethostname()[:40]}:{os.getpid()}:"
                                   f"{uuid.uuid4().hex[:8]}")
            atexit.register(self.stop, EXIT_WAIT_SECONDS)
        with self._lock:
            worker = self._worker
            if self._stopping.is_set() or (worker.thread is not None and worker.thread.is_alive()):
                return
            worker.thread = threading.Thread(target=self._run, args=(worker,), name="svc-outbox",
                                             daemon=True)
            worker.thread.start()

    def wake(self) -> None:
        """Look for due jobs now rather than at the next poll."""
        self.ensure_running()
        self._worker.wake.set()

    def stop(self, timeout: float = EXIT_WAIT_SECONDS) -> None:
        """Stop the worker after the job it is on (the others stay for the next process)."""
        self._stopping.set()
        atexit.unregister(self.stop)
        worker = self._worker
        worker.wake.set()
        if worker.thread is not None and worker.thread is not threading.current_thread():
            worker.thread.join(timeout)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wake the worker and wait until no job of any lane is pending (tests; False if some
        still are). A stopped outbox does not wait."""
        if self._stopping.is_set():
            return not self.pending()
        self.wake()
        deadline = time.monotonic() + timeout
        while self.pending() and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self.pending()

    def pending(self) -> int:
        with self.app.app_context():
            try:
                return sum(int(db.session.scalar(
                    select(func.count()).select_from(lane.model)
                    .where(lane.model.status == LeasedJob.PENDING)) or 0) for lane in self.lanes)
            finally:
                db.session.remove()

    def _run(self, worker: _Worker) -> None:
        # The first look waits a poll: a new process's first request is not kept waiting for it.
        wait, failing = self.poll_seconds, 0
        while True:
            worker.wake.wait(wait)
            worker.wake.clear()
            if self._stopping.is_set():
                return
            try:
                with self.app.app_context():
                    try:
                        until_next = self.run_due(worker)
                    finally:
                        db.session.remove()
            except Exception as error:  # the database is unreachable: the jobs wait there
                failing += 1
                if failing == 1:
                    log.error("the outbox cannot reach the database (%s); its jobs wait",
                              type(error).__name__)
                wait = min(self.poll_seconds * 2 ** min(failing, 16), ERROR_WAIT_MAX)
                continue
            if failing:
                log.info("the outbox reaches the database again")
                failing = 0
            wait = self.poll_seconds if until_next is None else min(self.poll_seconds,
                                                                    until_next)

    # The work ------------------------------------------------------------------------------

    def run_due(self, worker: _Worker) -> float | None:
        """Do every job that is due, one at a time, the first lane's first; the seconds until the
        next pending job is due (None: nothing is pending). Database errors propagate: the jobs
        stay in their tables."""
        self._feed()
        while not self._stopping.is_set():
            for (lane, job_id), outcome in list(worker.unrecorded.items()):
                self._record(job_id, worker, outcome, lane)
                del worker.unrecorded[lane, job_id]
            until_next: float | None = None
            for lane in self.lanes:
                head = db.session.execute(
                    select(lane.model.id, lane.model.next_attempt_at)
                    .where(lane.model.status == LeasedJob.PENDING)
                    .order_by(lane.model.next_attempt_at).limit(1)).first()
                db.session.rollback()  # end the read: a SQLite claim begins IMMEDIATE
                if head is None:
                    continue
                until_due: float = (head.next_attempt_at - self.clock()).total_seconds()
                if until_due > 0:
                    until_next = until_due if until_next is None else min(until_next, until_due)
                    continue
                self._work(head.id, worker, lane)
                break  # look again from the first lane
            else:
                return until_next
        return None

    def _feed(self) -> None:
        for lane in self.lanes:
            if lane.feed is None:
                continue
            try:
                lane.feed(self.clock())
            except SQLAlchemyError:
                raise
            except Exception:  # a bug: its trace, and the other lanes go on
                db.session.rollback()
                lane.log.exception("the %s lane's feed failed", lane.name)

    def _work(self, job_id: str, worker: _Worker, lane: Lane) -> None:
        job = self._claim(job_id, worker, lane)
        if job is None:
            return  # another worker won it
        outcome = self._attempt(job, lane)
        try:
            self._record(job.id, worker, outcome, lane)
        except SQLAlchemyError:
            worker.unrecorded[lane, job.id] = outcome  # recorded when the database is back
            raise

    @writes
    def _claim(self, job_id: str, worker: _Worker, lane: Lane | None = None) -> Job | None:
        model = (lane or self.mail).model
        at = self.clock()
        until = at + self.lease
        won = changed(
            update(model)
            .where(model.id == job_id, model.status == LeasedJob.PENDING,
                   model.next_attempt_at <= at)
            .values(claimed_by=worker.name, claimed_until=until, next_attempt_at=until,
                    attempts=model.attempts + 1)
            .execution_options(synchronize_session=False))
        row = db.session.get(model, job_id, populate_existing=True) if won else None
        return None if row is None else Job(job_id, row.kind, dict(getattr(row, "payload", {})),
                                            row.attempts)

    def _send_mail(self, job: Job) -> bool:
        message = self.handlers[job.kind](job)
        if message is None:
            return False
        self.transport.send(message.as_email(self.sender, job.id))
        return True

    def _attempt(self, job: Job, lane: Lane | None = None) -> _Outcome:
        lane = lane or self.mail
        try:
            return _Outcome(LeasedJob.SENT if lane.perform(job) else LeasedJob.SKIPPED)
        except Exception as error:
            db.session.rollback()
            kind = type(error).__name__
            if not isinstance(error, (*lane.expected_failures, SQLAlchemyError)):
                lane.log.exception("%s job %s (%s) failed", lane.name, job.id, job.kind)  # a bug
            lane.log.warning("%s delivery attempt %d of %d failed: %s", lane.name, job.attempts,
                             lane.attempts, kind)
            if job.attempts >= lane.attempts:
                lane.log.error("%s delivery failed after %d attempts; job %s is kept as failed",
                               lane.name, job.attempts, job.id)
                return _Outcome(LeasedJob.FAILED, kind)
            return _Outcome(LeasedJob.PENDING, kind, lane.delay(job.attempts))

    @writes
    def _record(self, job_id: str, worker: _Worker, outcome: _Outcome,
                lane: Lane | None = None) -> None:
        lane = lane or self.mail
        model = lane.model
        at = self.clock()
        values: dict[str, Any] = {"status": outcome.status, "claimed_by": None,
                                  "claimed_until": None}
        if outcome.status == LeasedJob.PENDING:
            values.update(next_attempt_at=at + timedelta(seconds=outcome.delay),
                          last_error=outcome.error)
        elif outcome.status == LeasedJob.FAILED:
            values.update(finished_at=at, last_error=outcome.error)
        else:  # done: what it was made from is no longer needed
            values.update(finished_at=at, **lane.done_values)
        kept = changed(
            update(model)
            .where(model.id == job_id, model.status == LeasedJob.PENDING,
                   model.claimed_by == worker.name)
            .values(**values).execution_options(synchronize_session=False))
        if not kept:
            lane.log.warning("%s job %s outlived its lease: another worker has it", lane.name,
                             job_id)


# Waking the worker after the answer -----------------------------------------------------------

class HeldJobs:
    """Wake-ups of the outbox asked for inside `holding()`, until `release()` does them."""

    def __init__(self) -> None:
        self._hand_overs: list[Callable[[], None]] = []

    def __bool__(self) -> bool:
        return bool(self._hand_overs)

    def add(self, hand_over: Callable[[], None]) -> None:
        self._hand_overs.append(hand_over)

    def release(self) -> None:
        """Do every held wake-up; later calls have nothing left to do."""
        hand_overs, self._hand_overs = self._hand_overs, []
        for hand_over in hand_overs:
            hand_over()


_held: ContextVar[HeldJobs | None] = ContextVar("svc_outbox_held", default=None)


@contextmanager
def holding() -> Iterator[HeldJobs]:
    """Within the block, the outbox is not woken: the wake-ups wait in the yielded HeldJobs."""
    held = HeldJobs()
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)


def build_outbox(app: Flask, handlers: Mapping[str, Handler],
                 lanes: tuple[Lane, ...] = ()) -> Outbox:
    config = app.config
    return Outbox(app, transport_for(config["MAIL_URL"], float(config["MAIL_TIMEOUT"])), handlers,
                  sender=sender_for(config), attempts=int(config["MAIL_ATTEMPTS"]),
                  retry_delay=float(config["MAIL_RETRY_DELAY"]),
                  poll_seconds=float(config["MAIL_POLL_SECONDS"]),
                  lease_seconds=float(config["MAIL_LEASE_SECONDS"]), lanes=lanes)


def outbox() -> Outbox:
    found: Outbox = current_app.extensions["svc-outbox"]
    return found


def wake_when_done() -> None:
    """Wake this process's worker once the open unit of work commits, or, inside `holding()`,
    once the request's answer has been sent."""
    box = outbox()
    if _held.get() is not None:
        _wake_after_answer(box)
    else:
        until_commit(_WAKE_AFTER_COMMIT, lambda: box, Outbox.wake)


def wake_after_answer() -> None:
    """Wake this process's worker now, or, inside `holding()`, once the request's answer has been
    sent (a listener of commits that wrote jobs to feed)."""
    _wake_after_answer(outbox())


def _wake_after_answer(box: Outbox) -> None:
    held = _held.get()
    if held is not None:
        held.add(box.wake)
    else:
        box.wake()
