"""The outbox: every mail the service promises is a `mail_jobs` row, sent by the outbox's mail
lane (app/infra/mail_lane.py). A job is written in the transaction of what it reports, so a mail
is promised exactly when the change commits.
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

from typing import Any

from cryptography.exceptions import InvalidTag
from sqlalchemy import select, update

from app.db.rows import insert_values
from app.domain.clock import system_clock
from app.domain.tokens import tokens
from app.extensions import db
from app.infra.lanes import MAIL
from app.infra.lanes import Job as Job  # for the rooms that schedule one
from app.infra.outbox_worker import wake_when_done
from app.infra.settings import settings
from app.models import MailJob
from app.models.types import new_id

_SEAL_PURPOSE = "mail job"  # what a kept token is sealed for (tokens.seal)


def schedule(kind: str, payload: dict[str, Any], *, token: str | None = None) -> None:
    """Add a mail job to the caller's unit of work. The outbox is woken after
    the commit, or, during a request, once its answer has been sent. `token`: the link's,
    made with the change the mail reports (kept as `keep_token` keeps one)."""
    at, job_id = system_clock(), new_id()
    insert_values(MailJob, id=job_id, kind=kind, payload=payload, status=MailJob.PENDING,
                  token_sealed=None if token is None else _seal(job_id, token), attempts=0,
                  next_attempt_at=at, claimed_by=None, claimed_until=None, last_error=None,
                  created_at=at, finished_at=None)
    wake_when_done(MAIL)


def keep_token(job: Job, raw: str) -> None:
    """Keep the token of the link `job` mails, for its retries, in the caller's unit of work (the
    one that stores the token's hash). Sealed under the service's key and the job's id: the
    database alone never shows a link."""
    db.session.execute(update(MailJob).where(MailJob.id == job.id)
                       .values(token_sealed=_seal(job.id, raw))
                       .execution_options(synchronize_session=False))


def _seal(job_id: str, raw: str) -> bytes:
    return tokens.seal(_sealing_holder(job_id), raw, purpose=_SEAL_PURPOSE)


def kept_token(job: Job) -> str | None:
    """The token an earlier attempt of `job` mailed (`keep_token`), if any. One sealed under
    another SECRET_KEY, which nobody can read any more, counts as none."""
    sealed = db.session.scalar(select(MailJob.token_sealed).where(MailJob.id == job.id))
    if sealed is None:
        return None
    try:
        return tokens.unseal(_sealing_holder(job.id), sealed, purpose=_SEAL_PURPOSE)
    except InvalidTag:
        return None


def _sealing_holder(job_id: str) -> str:
    return f"{settings().secret_key}\0{job_id}"
