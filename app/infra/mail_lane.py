"""The outbox's mail lane: a `mail_jobs` row is rendered by the handler of its kind and sent
through the transport (app/infra/mail.py). Which mail a change promises is the domain's
(app/domain/mail/outbox.py, app/domain/mail_jobs.py).
Why: docs/architecture/design-notes.md, "Mail outbox"."""

from __future__ import annotations

import logging
import smtplib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.infra.lanes import MAIL, Handler, Job, Lane
from app.infra.mail import Transport, sender_for, transport_for
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


def mail_lane(config: Mapping[str, Any], handlers: Mapping[str, Handler]) -> Lane:
    sending = MailSending(transport_for(config["MAIL_URL"], float(config["MAIL_TIMEOUT"])),
                          handlers, sender_for(config))
    return Lane(MAIL, MailJob, sending, max(1, int(config["MAIL_ATTEMPTS"])),
                float(config["MAIL_RETRY_DELAY"]),
                expected_failures=(OSError, smtplib.SMTPException),
                done_values={"payload": {}, "token_sealed": None}, log=log)
