"""The outbox: the lanes the app factory gives it (mail, events to client sites), each worked
off by a thread of its own in each process, which claims the lane's due jobs, does them and
records the outcome (app/infra/lanes.py). A claim is a lease won by a conditional UPDATE: one
worker does a job, and a dead worker's job comes due again. Each lane has its own thread so that
a slow job of one lane (a site that does not answer, a slow mail server) never delays another's.
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

import atexit
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from flask import Flask, current_app
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from app.db.transactions import until_commit
from app.extensions import db
from app.infra.lanes import Lane, Outcome, attempt, claim, record
from app.models.leased_job import LeasedJob

log = logging.getLogger("svc_auth.outbox")
OUTBOX_KEY = "svc-outbox"  # the app's Outbox, in app.extensions


def _system_clock() -> datetime:  # the outbox runs on the real clock, whatever the app's says
    return datetime.now(UTC)


EXIT_WAIT_SECONDS = 10.0  # how long an exiting process waits for the jobs it is doing
ERROR_WAIT_MAX = 30.0  # the longest pause between looks while the database cannot be reached
_WAKE_AFTER_COMMIT = "svc_outbox_wake"


@dataclass
class _Worker:
    """The thread of one lane in one process, and what it knows that the database does not
    yet."""

    name: str  # what its claims say (claimed_by): host, process, and a random word
    lane: Lane
    thread: threading.Thread | None = None
    wake: threading.Event = field(default_factory=threading.Event)
    unrecorded: dict[str, Outcome] = field(default_factory=dict)


class Outbox:
    """The jobs of one app, in lanes that are equals: a worker thread per lane in each process,
    started on first use (after a fork, the child starts its own)."""

    def __init__(self, app: Flask, lanes: Sequence[Lane], *, poll_seconds: float,
                 lease_seconds: float, clock: Callable[[], datetime] = _system_clock) -> None:
        self.app, self.lanes = app, tuple(lanes)
        self._by_name = {lane.name: lane for lane in self.lanes}
        if len(self._by_name) != len(self.lanes):
            raise ValueError("two lanes of the outbox have the same name")
        self.poll_seconds, self.lease = poll_seconds, timedelta(seconds=lease_seconds)
        self.clock = clock
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._pid = -1
        self._workers: dict[str, _Worker] = {}

    def lane(self, name: str) -> Lane:
        return self._by_name[name]

    # The threads ---------------------------------------------------------------------------

    def ensure_running(self) -> None:
        """Start this process's lane threads unless it has (cheap: every request calls it; a
        fork's child starts its own). `wake` starts again a thread that has ended."""
        if self._pid != os.getpid():
            self._start()

    def wake(self, lane: str | None = None) -> None:
        """Look for the due jobs of `lane` (None: of every lane) now rather than at the next
        poll."""
        self.ensure_running()
        for worker in self._workers.values() if lane is None else (self._workers[lane],):
            if worker.thread is None or not worker.thread.is_alive():
                self._start()
            worker.wake.set()

    def _start(self) -> None:
        if self._pid != os.getpid():  # a fork: nothing of the parent's threads is ours
            self._lock, self._pid = threading.Lock(), os.getpid()
            name = f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
            self._workers = {lane.name: _Worker(name, lane) for lane in self.lanes}
            atexit.register(self.stop, EXIT_WAIT_SECONDS)
        with self._lock:
            if self._stopping.is_set():
                return
            for worker in self._workers.values():
                if worker.thread is None or not worker.thread.is_alive():
                    worker.thread = threading.Thread(
                        target=self._run, args=(worker,), daemon=True,
                        name=f"svc-outbox-{worker.lane.name}")
                    worker.thread.start()

    def stop(self, timeout: float = EXIT_WAIT_SECONDS) -> None:
        """Stop every lane's thread after the job it is on (the others stay for the next
        process), waiting at most `timeout` seconds in all."""
        self._stopping.set()
        atexit.unregister(self.stop)
        for worker in self._workers.values():
            worker.wake.set()
        deadline = time.monotonic() + timeout
        for worker in self._workers.values():
            if worker.thread is not None and worker.thread is not threading.current_thread():
                worker.thread.join(max(0.0, deadline - time.monotonic()))

    def drain(self, timeout: float = 10.0) -> bool:
        """Wake every lane and wait until no job of any lane is pending (tests; False if some
        still are). A stopped outbox does not wait."""
        if self._stopping.is_set():
            return not self.pending()
        self.wake()
        deadline = time.monotonic() + timeout
        woken = time.monotonic()
        while self.pending() and time.monotonic() < deadline:
            time.sleep(0.01)
            if time.monotonic() - woken > 1:  # a lane that missed it, or whose thread ended
                self.wake()
                woken = time.monotonic()
        return not self.pending()

    def pending(self) -> int:
        """How many jobs of all lanes are pending."""
        with self.app.app_context():
            try:
                return sum(int(db.session.scalar(
                    select(func.count()).select_from(lane.model)
                    .where(lane.model.status == LeasedJob.PENDING)) or 0) for lane in self.lanes)
            finally:
                db.session.remove()

    def _run(self, worker: _Worker) -> None:
        # The first look waits a poll: a new process's first request is not kept waiting for it.
        wait, failing, lane = self.poll_seconds, 0, worker.lane
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
                    log.error("the outbox's %s lane cannot reach the database (%s); its jobs "
                              "wait", lane.name, type(error).__name__)
                wait = min(self.poll_seconds * 2 ** min(failing, 16), ERROR_WAIT_MAX)
                continue
            if failing:
                log.info("the outbox's %s lane reaches the database again", lane.name)
                failing = 0
            wait = self.poll_seconds if until_next is None else min(self.poll_seconds,
                                                                    until_next)

    # The work of one lane ------------------------------------------------------------------

    def run_due(self, worker: _Worker) -> float | None:
        """Do every job of the worker's lane that is due, one at a time, the earliest first; the
        seconds until its next pending job is due (None: nothing is pending). Database errors
        propagate: the jobs stay in their table."""
        lane = worker.lane
        self._feed(lane)
        while not self._stopping.is_set():
            for job_id, outcome in list(worker.unrecorded.items()):
                record(lane, job_id, worker.name, outcome, self.clock())
                del worker.unrecorded[job_id]
            head = db.session.execute(
                select(lane.model.id, lane.model.next_attempt_at)
                .where(lane.model.status == LeasedJob.PENDING)
                .order_by(lane.model.next_attempt_at).limit(1)).first()
            db.session.rollback()  # end the read: a SQLite claim begins IMMEDIATE
            if head is None:
                return None
            until_due: float = (head.next_attempt_at - self.clock()).total_seconds()
            if until_due > 0:
                return until_due
            self._work(head.id, worker)
        return None

    def _feed(self, lane: Lane) -> None:
        if lane.feed is None:
            return
        try:
            lane.feed(self.clock())
        except SQLAlchemyError:
            raise
        except Exception:  # a bug: its trace, and the lane's jobs go on
            db.session.rollback()
            lane.log.exception("the %s lane's feed failed", lane.name)

    def _work(self, job_id: str, worker: _Worker) -> None:
        lane = worker.lane
        job = claim(lane, job_id, worker.name, self.clock(), self.lease)
        if job is None:
            return  # another worker won it
        outcome = attempt(lane, job)
        try:
            record(lane, job.id, worker.name, outcome, self.clock())
        except SQLAlchemyError:
            worker.unrecorded[job.id] = outcome  # recorded when the database is back
            raise


# Waking a lane after the commit, or after the answer ------------------------------------------

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


def outbox() -> Outbox:
    found: Outbox = current_app.extensions[OUTBOX_KEY]
    return found


def wake_when_done(lane: str) -> None:
    """Wake this process's thread of `lane` once the open unit of work commits, or, inside
    `holding()`, once the request's answer has been sent (the unit of work has committed by
    then). Nothing, while commits do not wake the lane (Lane.woken_by_commits)."""
    box = outbox()
    if not box.lane(lane).woken_by_commits:
        return
    held = _held.get()
    if held is not None:
        held.add(lambda: box.wake(lane))
    else:
        until_commit(f"{_WAKE_AFTER_COMMIT}:{lane}", lambda: box, lambda found: found.wake(lane))
