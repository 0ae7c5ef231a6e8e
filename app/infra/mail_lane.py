"""The outbox's mail lane: a `mail_jobs` row is rendered by the handler of its kind and sent
through the transport (app/infra/mail.py). Which mail a change promises is the domain's
(app/domain/mail/outbox.py, app/domain/mail_jobs.py).
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Mapping
from dataclasses import dataclass

from app.infra.lanes import MAIL, Handler, Job, Lane
from app.infra.mail import Transport, sender_for, transport_for
from app.infra.settings import Settings
from app.models import MailJob

log = logging.getLogger("svc_auth.mail")


@dataclass
class MailSending:
    """How the mail lane does a job: the message its kind's handler renders, from `sender`."""

    transport: Transport
    handlers: Mapping[str, Handler]
    sender: str

    def __call__(self, job: Job) -> bool:
        message = self.handlers[job.kind](job)
        if message is None:
            return False
        self.transport.send(message.as_email(self.sender, job.id))
        return True


def mail_lane(config: Settings, handlers: Mapping[str, Handler]) -> Lane:
    sending = MailSending(transport_for(config.mail_url, config.mail_timeout), handlers,
                          sender_for(config))
    return Lane(MAIL, MailJob, sending, max(1, config.mail_attempts), config.mail_retry_delay,
                expected_failures=(OSError, smtplib.SMTPException),
                done_values={"payload": {}, "token_sealed": None}, log=log)
