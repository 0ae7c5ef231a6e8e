"""The lanes of the outbox (app/infra/outbox_worker.py): a table of jobs with the lease columns
(app/models/leased_job.py) and how its jobs are done and retried, the job a worker claimed, and
the operators' retry.
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import update

from app.db.rows import changed
from app.db.transactions import writes
from app.infra.mail import Message
from app.models.leased_job import LeasedJob

log = logging.getLogger("svc_auth.mail")


@dataclass(frozen=True)
class Job:
    """A job a worker has claimed: what its handler renders the message from (a mail job's
    payload; a delivery's row is read by its lane)."""

    id: str
    kind: str
    payload: dict[str, Any]
    attempts: int


# What a job of each kind sends: the message rendered from its payload, or None when there is
# nothing to send (no such account, already confirmed). Raising means "try again later".
Handler = Callable[[Job], Message | None]


@dataclass(eq=False)  # one object per lane, hashed by its identity
class Lane:
    """One table of jobs (a LeasedJob model) and how its jobs are done and retried."""

    name: str  # in the log: "mail", "event"
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

    def delay(self, attempts: int) -> float:
        return min(self.retry_delay * 2.0 ** (attempts - 1), self.max_delay)


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


