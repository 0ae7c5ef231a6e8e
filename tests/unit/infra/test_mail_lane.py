"""app/infra/mail_lane.py: the mail lane renders a job with its kind's handler and sends it from
the service's sender; a job with nothing to send (its handler says None) sends nothing."""

from __future__ import annotations

from app.infra.lanes import Job
from app.infra.mail import MemoryTransport, Message
from app.infra.mail_lane import MailSending

SENDER = "Example <no-reply@example.com>"


def job(kind: str) -> Job:
    return Job(id="job-1", kind=kind, payload={"to": "ada@example.com"}, attempts=1)


def sending() -> tuple[MailSending, MemoryTransport]:
    transport = MemoryTransport()
    handlers = {"hello": lambda j: Message(j.payload["to"], "Hello", "Hi", "<p>Hi</p>"),
                "gone": lambda j: None}
    return MailSending(transport, handlers, SENDER), transport


def test_a_job_is_sent_from_the_services_sender():
    send, transport = sending()
    assert send(job("hello")) is True
    [sent] = transport.sent
    assert sent["To"] == "ada@example.com" and sent["From"] == SENDER
    assert sent["Subject"] == "Hello"


def test_a_job_with_nothing_to_send_sends_nothing():
    send, transport = sending()
    assert send(job("gone")) is False
    assert transport.sent == []
