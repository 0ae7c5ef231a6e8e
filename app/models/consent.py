from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.types import UTCDateTime


class ConsentGrant(Model):
    """What a person allowed a third-party client site (one not of the family) to know: asked
    once on the consent page, remembered until they sign in with a wider scope."""

    __tablename__ = "consent_grants"

    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"),
                                         primary_key=True)
    client_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    scope: Mapped[str] = mapped_column(String(255))
    granted_at: Mapped[datetime] = mapped_column(UTCDateTime())
