"""What a mail job of each kind sends, rendered when the job runs from its payload."""

from __future__ import annotations

from typing import Any

from app.domain import emails, recovery
from app.domain.mail import Message
from app.domain.outbox import Handler
from app.models import MailJob


def _password_changed(payload: dict[str, Any]) -> Message:
    return emails.password_changed(payload["to"], payload.get("unlinked") or [])


def _provider_linked(payload: dict[str, Any]) -> Message:
    return emails.provider_linked(payload["to"], payload["provider"],
                                  took_over=bool(payload.get("took_over")))


def _provider_unlinked(payload: dict[str, Any]) -> Message:
    return emails.provider_unlinked(payload["to"], payload["provider"])


def _second_factor(added: bool) -> Handler:
    return lambda payload: emails.second_factor_changed(payload["to"], payload["factor"],
                                                        added=added)


HANDLERS: dict[str, Handler] = {
    MailJob.RESET_PASSWORD: recovery.reset_link_mail,
    MailJob.CONFIRM_EMAIL: recovery.confirmation_mail,
    MailJob.PASSWORD_CHANGED: _password_changed,
    MailJob.PROVIDER_LINKED: _provider_linked,
    MailJob.PROVIDER_UNLINKED: _provider_unlinked,
    MailJob.SECOND_FACTOR_ADDED: _second_factor(added=True),
    MailJob.SECOND_FACTOR_REMOVED: _second_factor(added=False),
}
