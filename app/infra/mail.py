"""Mail: a message, and the transports that deliver it (console, file, SMTP, memory).

Nothing here retries or queues: the outbox (app/infra/outbox_worker.py) decides when a message is
sent, and what happens when a transport fails.
"""

from __future__ import annotations

import hashlib
import logging
import smtplib
import ssl
import time
import uuid
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, parseaddr
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from app.infra.settings import Settings

log = logging.getLogger("svc_auth.mail")


@dataclass(frozen=True)
class Message:
    to: str
    subject: str
    text: str
    html: str

    def as_email(self, sender: str, job_id: str) -> EmailMessage:
        """The email of the job `job_id`: whenever the job sends the same message (a retry
        after a worker died past the mail server's "250 OK"), the same Message-ID and bytes
        (but the Date), so that mail systems see one message twice, not two."""
        digest = hashlib.sha256("\0".join((sender, self.to, self.subject, self.text, self.html))
                                .encode("utf-8", "surrogatepass")).hexdigest()[:12]
        domain = parseaddr(sender)[1].rpartition("@")[2] or "localhost"
        email = EmailMessage()
        email["From"], email["To"], email["Subject"] = sender, self.to, self.subject
        email["Date"] = formatdate(localtime=False)
        email["Message-ID"] = f"<{job_id}.{digest}@{domain}>"
        email.set_content(self.text)
        email.add_alternative(self.html, subtype="html")
        email.set_boundary(f"=={digest}==")  # else a random one
        return email


class Transport(Protocol):
    def send(self, email: EmailMessage) -> None: ...


class ConsoleTransport:
    """Development only: the message goes to the log (refused when SVC_ENV=production)."""

    def send(self, email: EmailMessage) -> None:
        body = email.get_body(("plain",))
        text = body.get_content() if body is not None else ""
        log.info("mail to %s: %s\n%s", email["To"], email["Subject"], text)


class FileTransport:
    """One .eml file per message in a folder."""

    def __init__(self, folder: str) -> None:
        self.folder = Path(folder)

    def send(self, email: EmailMessage) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}.eml"
        (self.folder / name).write_bytes(bytes(email))


class SmtpTransport:
    """smtp://user:pass@host:port (STARTTLS whenever the server offers it) or smtps:// (TLS)."""

    def __init__(self, url: str, timeout: float) -> None:
        parts = urlsplit(url)
        self.implicit_tls = parts.scheme == "smtps"
        self.host = parts.hostname or "localhost"
        self.port = parts.port or (465 if self.implicit_tls else 25)
        self.username = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.timeout = timeout

    def send(self, email: EmailMessage) -> None:
        context = ssl.create_default_context()
        smtp: smtplib.SMTP = (
            smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=context)
            if self.implicit_tls else smtplib.SMTP(self.host, self.port, timeout=self.timeout))
        with smtp:
            smtp.ehlo()
            if not self.implicit_tls and smtp.has_extn("starttls"):
                smtp.starttls(context=context)
                smtp.ehlo()
            if self.username:
                smtp.login(self.username, self.password or "")
            smtp.send_message(email)


class MemoryTransport:
    """Tests: messages are kept in a list."""

    def __init__(self) -> None:
        self.sent: list[EmailMessage] = []

    def send(self, email: EmailMessage) -> None:
        self.sent.append(email)


def transport_for(url: str, timeout: float) -> Transport:
    scheme = urlsplit(url).scheme
    if scheme == "console":
        return ConsoleTransport()
    if scheme == "file":
        return FileTransport(unquote(urlsplit(url).path))
    if scheme in ("smtp", "smtps"):
        return SmtpTransport(url, timeout)
    if scheme == "memory":
        return MemoryTransport()
    raise RuntimeError("SVC_MAIL_URL must be console://, file:///dir, smtp://, smtps:// or memory://")


def sender_for(config: Settings) -> str:
    """SVC_MAIL_FROM, or "{BRAND} <no-reply@{host of SVC_PUBLIC_URL}>"."""
    host = urlsplit(config.public_url).hostname or "localhost"
    return config.mail_from or f"{config.brand} <no-reply@{host}>"
