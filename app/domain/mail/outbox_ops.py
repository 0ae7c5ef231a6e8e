"""What operators see of the outbox and do with it: counts, retries, purges, and metrics.

The counts are read from the database when asked (a command, a scrape of /metrics): every
worker and instance shares one table, so there is nothing to merge.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from sqlalchemy import BindParameter, bindparam, func, select
from sqlalchemy.exc import SQLAlchemyError

from app.db.batches import delete_batched
from app.domain.clock import system_clock
from app.extensions import db
from app.infra.lanes import due_now
from app.models import MailJob
from app.models.leased_job import LeasedJob

log = logging.getLogger("svc_auth.mail")
STATUSES = (MailJob.PENDING, MailJob.SENT, MailJob.SKIPPED, MailJob.FAILED)


@dataclass(frozen=True)
class Summary:
    counts: dict[str, int]
    oldest_pending: datetime | None  # when the oldest job still pending was promised
    failed: list[MailJob]  # the most recent first


def summary(failed_shown: int = 20) -> Summary:
    counts = dict.fromkeys(STATUSES, 0)
    for status, count in db.session.execute(
            select(MailJob.status, func.count()).group_by(MailJob.status)):
        counts[status] = int(count)
    oldest = _oldest_pending()
    failed = list(db.session.scalars(select(MailJob).where(MailJob.status == MailJob.FAILED)
                                     .order_by(MailJob.finished_at.desc()).limit(failed_shown)))
    return Summary(counts, oldest, failed)


def retry(*, failed: bool) -> int:
    """Make every pending job that waits for a later attempt due now (after fixing the mail
    server, say); with `failed`, also put failed jobs back, with a fresh set of attempts.
    Jobs a worker holds are left to it. How many jobs are due now."""
    return due_now(MailJob, failed=failed)


def purge(older_than: timedelta, *, failed: bool = False,
          jobs: type[LeasedJob] = MailJob) -> int:
    """Delete jobs (mail, or another lane's: `jobs`) sent or skipped more than `older_than` ago
    (with `failed`, failed ones too: they will never go). How many were deleted."""
    done = [jobs.SENT, jobs.SKIPPED, *([jobs.FAILED] if failed else [])]
    return delete_batched(jobs.id, jobs.status.in_(done)
                          & (jobs.finished_at < system_clock() - older_than))


def waiting() -> tuple[dict[str, int], datetime | None]:
    """How many jobs are pending and failed, and when the oldest pending one was promised: read
    from the status index, never from the sent and skipped jobs that pile up until a purge."""
    counts = dict.fromkeys((MailJob.PENDING, MailJob.FAILED), 0)
    for status, count in db.session.execute(
            select(MailJob.status, func.count()).where(MailJob.status.in_(
                [_written_in(status) for status in counts])).group_by(MailJob.status)):
        counts[status] = int(count)
    return counts, _oldest_pending()


def _oldest_pending() -> datetime | None:
    return db.session.scalar(select(func.min(MailJob.created_at))
                             .where(MailJob.status == _written_in(MailJob.PENDING)))


def _written_in(status: str) -> BindParameter[str]:
    """A status written in the statement, not sent as a parameter: a plan PostgreSQL keeps for
    the prepared statement then still knows that few jobs have it (a generic plan, for any
    status, reads the whole table)."""
    return bindparam(None, status, literal_execute=True)


class OutboxCollector(Collector):
    """Gauges read from the database at scrape time, inside the /metrics request."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        try:
            counts, oldest_pending = waiting()
        except SQLAlchemyError as error:  # the request's metrics still go out
            db.session.rollback()
            log.warning("outbox metrics unavailable: %s", type(error).__name__)
            return
        jobs = GaugeMetricFamily("svc_auth_mail_jobs",
                                 "Mail jobs in the outbox table, by status.", labels=["status"])
        for status, count in counts.items():
            jobs.add_metric([status], count)
        yield jobs
        age = 0.0 if oldest_pending is None else (
            system_clock() - oldest_pending).total_seconds()
        yield GaugeMetricFamily("svc_auth_mail_oldest_pending_seconds",
                                "How long the oldest pending mail job has waited (0: none).",
                                value=max(age, 0.0))
