"""The lanes of the outbox (app/infra/outbox_worker.py): a table of jobs with the lease columns
(app/models/leased_job.py), how its jobs are done and retried, and the steps of one job: claimed
under a lease, attempted, its outcome recorded. Also the operators' retry.
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import SQLAlchemyError

from app.db.rows import changed
from app.db.transactions import writes
from app.extensions import db
from app.infra.mail import Message
from app.models.leased_job import LeasedJob

log = logging.getLogger("svc_auth.outbox")
# The lanes' names: app/infra/mail_lane.py, and app/domain/deliveries.py for the events.
MAIL, EVENTS = "mail", "events"


@dataclass(frozen=True)
class Job:
    """A job a worker has claimed: what its handler renders the message from (a mail job's
    payload; a delivery's row is read by its lane)."""

    id: str
    kind: str
    payload: dict[str, Any]
    attempts: int


# What a mail job of each kind sends: the message rendered from its payload, or None when there
# is nothing to send (no such account, already confirmed). Raising means "try again later".
Handler = Callable[[Job], Message | None]


@dataclass(eq=False)  # one object per lane, hashed by its identity
class Lane:
    """One table of jobs (a LeasedJob model) and how its jobs are done and retried. Each lane
    has its own worker thread in each process: a slow job of one never delays another's."""

    name: str  # its name in the factory, the log and `Outbox.wake`: "mail", "events"
    model: type[LeasedJob]
    # Does a job: True when done, False when there was nothing to do (skipped); raising means
    # "try again later".
    perform: Callable[[Job], bool]
    attempts: int
    retry_delay: float  # before the second attempt; doubled after each failure
    max_delay: float = math.inf
    expected_failures: tuple[type[Exception], ...] = ()  # logged by their kind, without a trace
    done_values: dict[str, Any] = field(default_factory=dict)  # what a finished job forgets
    # Writes the lane's new jobs before the worker looks for due ones (a fan-out), at a time.
    feed: Callable[[datetime], object] | None = None
    log: logging.Logger = log
    # Whether a commit that writes its jobs (or what its feed reads) wakes the lane's worker;
    # if not, its poll finds them. Its feed may change it as the lane gains or loses its use.
    woken_by_commits: bool = True

    def delay(self, attempts: int) -> float:
        return min(self.retry_delay * 2.0 ** (attempts - 1), self.max_delay)


@dataclass(frozen=True)
class Outcome:
    status: str  # LeasedJob.SENT, SKIPPED, FAILED, or PENDING (try again after `delay`)
    error: str | None = None
    delay: float = 0.0


# One job: claim, attempt, record ---------------------------------------------------------------

@writes
def claim(lane: Lane, job_id: str, worker: str, at: datetime, lease: timedelta) -> Job | None:
    """The job, once `worker` holds it until `at + lease` (None: another worker won it)."""
    model, until = lane.model, at + lease
    won = changed(
        update(model)
        .where(model.id == job_id, model.status == LeasedJob.PENDING,
               model.next_attempt_at <= at)
        .values(claimed_by=worker, claimed_until=until, next_attempt_at=until,
                attempts=model.attempts + 1)
        .execution_options(synchronize_session=False))
    row = db.session.get(model, job_id, populate_existing=True) if won else None
    return None if row is None else Job(job_id, row.kind, dict(getattr(row, "payload", {})),
                                        row.attempts)


def attempt(lane: Lane, job: Job) -> Outcome:
    try:
        return Outcome(LeasedJob.SENT if lane.perform(job) else LeasedJob.SKIPPED)
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
            return Outcome(LeasedJob.FAILED, kind)
        return Outcome(LeasedJob.PENDING, kind, lane.delay(job.attempts))


@writes
def record(lane: Lane, job_id: str, worker: str, outcome: Outcome, at: datetime) -> None:
    model = lane.model
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
               model.claimed_by == worker)
        .values(**values).execution_options(synchronize_session=False))
    if not kept:
        lane.log.warning("%s job %s outlived its lease: another worker has it", lane.name,
                         job_id)


# The operators' retry --------------------------------------------------------------------------

@writes
def due_now(model: type[LeasedJob], *, failed: bool, where: Any = True) -> int:
    """Make every pending job of `model` (that `where` selects) that waits for a later attempt
    due now; with `failed`, also put failed ones back, with a fresh set of attempts. Jobs a
    worker holds are left to it. How many jobs are due now."""
    at = datetime.now(UTC)
    waiting = changed(
        update(model).where(where, model.status == LeasedJob.PENDING,
                            model.claimed_by.is_(None), model.next_attempt_at > at)
        .values(next_attempt_at=at).execution_options(synchronize_session=False))
    revived = 0
    if failed:
        revived = changed(
            update(model).where(where, model.status == LeasedJob.FAILED)
            .values(status=LeasedJob.PENDING, attempts=0, next_attempt_at=at, finished_at=None)
            .execution_options(synchronize_session=False))
    return int(waiting) + int(revived)
