from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, Index, LargeBinary
from sqlalchemy.orm import Mapped, mapped_column

from app.extensions import Model
from app.models.leased_job import LeasedJob


class MailJob(LeasedJob, Model):
    """A mail the service has promised, written in the transaction of what it reports and worked
    off by the outbox. `payload` never holds a token: the job makes its own, sealed in
    `token_sealed`, so a retry mails the same link. A claim is a lease, until `claimed_until`.
    Why: docs/architecture/design-notes.md, "Mail outbox"."""

    __tablename__ = "mail_jobs"

    # Kinds
    RESET_PASSWORD = "reset_password"  # noqa: S105 (a kind, not a password)
    CONFIRM_EMAIL = "confirm_email"
    PASSWORD_CHANGED = "password_changed"  # noqa: S105
    PASSWORD_REMOVED = "password_removed"  # noqa: S105 (one not shown to be the holder's)
    PROVIDER_LINKED = "provider_linked"
    PROVIDER_UNLINKED = "provider_unlinked"
    SECOND_FACTOR_ADDED = "second_factor_added"
    SECOND_FACTOR_REMOVED = "second_factor_removed"
    INVITATION = "invitation"  # an account opened by an operator: choose a password
    EMAIL_CHANGE = "email_change"  # to the new address: a link that makes the change
    EMAIL_CHANGED = "email_changed"  # to the old address: a link that undoes it
    EMAIL_CHANGE_REFUSED = "email_change_refused"  # to a taken new address: nothing changes
    DELETION_SCHEDULED = "deletion_scheduled"  # a link that undoes it within the grace period
    NEW_DEVICE = "new_device"  # a sign-in from a device the account has not used
    RECOVERY_CODE_USED = "recovery_code_used"
    SIGNUP_CODE = "signup_code"  # to an address with no account: the code of a passkey sign-up
    EMAIL_CODE = "email_code"  # a sign-in code and link (accounts/email_sign_in.py)
    # Statuses: LeasedJob's (pending, sent, skipped, failed)

    __table_args__ = (Index("ix_mail_jobs_status_next_attempt", "status", "next_attempt_at"),)

    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    token_sealed: Mapped[bytes | None] = mapped_column(LargeBinary)
