"""The audit table as tests read it."""

from __future__ import annotations

from typing import Any

from flask import Flask
from sqlalchemy import select

from app.extensions import db
from app.models import AuditEvent


def audit_rows(app: Flask, **where: Any) -> list[AuditEvent]:
    """The audit events whose columns hold these values, oldest first."""
    with app.app_context():
        query = select(AuditEvent).order_by(AuditEvent.id)
        for name, value in where.items():
            query = query.where(getattr(AuditEvent, name) == value)
        return list(db.session.scalars(query))
