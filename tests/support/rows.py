"""What the database holds, read in the app's context."""

from __future__ import annotations

from flask import Flask
from sqlalchemy import func, select

from app.extensions import db
from app.models import HandoffCode, MailJob


def handoff_codes(app: Flask) -> int:
    """How many handoff codes are stored."""
    with app.app_context():
        return int(db.session.scalar(select(func.count()).select_from(HandoffCode)) or 0)


def mail_jobs(app: Flask) -> list[MailJob]:
    """The outbox's mail jobs, oldest first."""
    with app.app_context():
        return list(db.session.scalars(select(MailJob).order_by(MailJob.created_at)))
