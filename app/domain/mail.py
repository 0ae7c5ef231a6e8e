"""Mail: a sender interface with console, file, SMTP and memory transports, and an outbox.

The outbox runs jobs on a background thread, off the request path: an endpoint that mails hands
over a job and answers at once, so its timing never depends on whether an account exists or how
the mail server is doing. Inside `holding()` (every request: app/after_response.py) a job waits
until the answer has been sent: started at once, the thread would compete with the answer for the
interpreter, and an answer that mails would be slower than one that does not. Sending is retried a
bounded number of times; a failure is logged by its kind only (never the message, which may hold a
link with a token) and never shown to anyone.
"""

from __future__ import annotations

import atexit
import logging
import queue
import smtplib
import ssl
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from flask import Flask, current_app

from app.extensions import db

log = logging.getLogger("svc_auth.mail")

Job = Callable[[], Any]

# How long a process that exits (a recycled or stopped worker) waits for the jobs it still holds.
EXIT_WAIT_SECONDS = 10.0


@dataclass(frozen=True)
class Message:
    to: str
    subject: str
    text: str
    html: str

    def as_email(self, sender: str) -> EmailMessage:
        email = EmailMessage()
        email["From"], email["To"], email["Subject"] = sender, self.to, self.subject
        email["Date"] = formatdate(localtime=False)
        email["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2].rstrip(">") or None)
        email.set_content(self.text)
        email.add_alternative(self.html, subtype="html")
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


class Outbox:
    """A background thread per process that runs mail jobs, each in the app's context."""

    def __init__(self, app: Flask, transport: Transport, *, sender: str, attempts: int,
                 retry_delay: float, max_pending: int = 10_000) -> None:
        self.app, self.transport, self.sender = app, transport, sender
        self.attempts, self.retry_delay = attempts, retry_delay
        # Bounded: a flood of requests must not grow memory without end. Past the bound a job
        # is dropped with an error logged; the requester's answer stays the same.
        self._jobs: queue.Queue[Callable[[], Any]] = queue.Queue(maxsize=max_pending)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run_later(self, job: Job) -> None:
        """Hand a job over and return at once; inside `holding()`, the job starts when the holder
        releases it. Schedule a job after the commit of what it reports: it runs whatever the
        answer turns out to be."""
        held = _held.get()
        if held is not None:
            held.add(lambda: self._queue(job))
        else:
            self._queue(job)

    def _queue(self, job: Job) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():  # also after a fork
                self._thread = threading.Thread(target=self._work, name="svc-outbox", daemon=True)
                self._thread.start()
                atexit.register(self.drain, EXIT_WAIT_SECONDS)
        try:
            self._jobs.put_nowait(job)
        except queue.Full:
            log.error("outbox full (%d jobs waiting): a mail job was dropped", self._jobs.maxsize)

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every job handed over so far has finished (tests, shutdown)."""
        deadline = time.monotonic() + timeout
        while self._jobs.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.01)
        return not self._jobs.unfinished_tasks

    def send(self, message: Message) -> bool:
        """Deliver now, retrying; called from jobs, on the outbox's thread."""
        email = message.as_email(self.sender)
        for attempt in range(1, self.attempts + 1):
            try:
                self.transport.send(email)
                return True
            except (OSError, smtplib.SMTPException) as error:
                log.warning("mail delivery attempt %d of %d failed: %s", attempt, self.attempts,
                            type(error).__name__)
                if attempt < self.attempts:
                    time.sleep(self.retry_delay * 2 ** (attempt - 1))
        log.error("mail delivery failed after %d attempts; the message is dropped", self.attempts)
        return False

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                with self.app.app_context():
                    try:
                        job()
                    finally:
                        db.session.remove()
            except Exception:
                log.exception("mail job failed")
            finally:
                self._jobs.task_done()


class HeldJobs:
    """Jobs scheduled inside `holding()`, until `release()` hands them to their outbox."""

    def __init__(self) -> None:
        self._hand_overs: list[Callable[[], None]] = []

    def __bool__(self) -> bool:
        return bool(self._hand_overs)

    def add(self, hand_over: Callable[[], None]) -> None:
        self._hand_overs.append(hand_over)

    def release(self) -> None:
        """Start every held job; later calls have nothing left to start."""
        hand_overs, self._hand_overs = self._hand_overs, []
        for hand_over in hand_overs:
            hand_over()


_held: ContextVar[HeldJobs | None] = ContextVar("svc_outbox_held", default=None)


@contextmanager
def holding() -> Iterator[HeldJobs]:
    """Within the block, jobs scheduled in this context wait in the yielded HeldJobs."""
    held = HeldJobs()
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)


def build_outbox(app: Flask) -> Outbox:
    config = app.config
    host = urlsplit(config["PUBLIC_URL"]).hostname or "localhost"
    return Outbox(app, transport_for(config["MAIL_URL"], float(config["MAIL_TIMEOUT"])),
                  sender=config["MAIL_FROM"] or f"{config['BRAND']} <no-reply@{host}>",
                  attempts=int(config["MAIL_ATTEMPTS"]),
                  retry_delay=float(config["MAIL_RETRY_DELAY"]))


def outbox() -> Outbox:
    found: Outbox = current_app.extensions["svc-outbox"]
    return found
