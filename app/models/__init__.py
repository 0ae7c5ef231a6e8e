"""Mapped classes only. Import them from here."""

from app.models.audit import AuditEvent
from app.models.session import AuthSession, RefreshToken
from app.models.user import User

__all__ = ["AuditEvent", "AuthSession", "RefreshToken", "User"]
