"""Mail through a real SMTP server on 127.0.0.1 (aiosmtpd), as production would send it; and the
same message twice when a worker dies after the server took it (issue 21, item 8a)."""

from __future__ import annotations

import datetime
import email
import ipaddress
import re
import ssl
from datetime import timedelta
from email import policy

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from sqlalchemy import select

from app.domain.clock import system_clock
from app.domain.mail.outbox import schedule
from app.extensions import db
from app.infra import lanes
from app.infra.lanes import MAIL
from app.models import MailJob
from tests.support.accounts import PASSWORD
from tests.support.apps import drained
from tests.support.pages import open_mailed_link
from tests.support.rows import mail_jobs as jobs
from tests.support.servers import free_port
from tests.support.settings import change_settings


class Collector:
    """An aiosmtpd handler that keeps what it receives; it can refuse the first few messages."""

    def __init__(self, refuse_first: int = 0) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self.raw: list[bytes] = []  # what the server received of each, byte for byte
        self.tls_used: list[bool] = []
        self.refuse_first = refuse_first

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
        if self.refuse_first:
            self.refuse_first -= 1
            return "451 Try again later"
        self.messages.append(email.message_from_bytes(envelope.content, policy=policy.default))
        self.raw.append(envelope.content)
        self.tls_used.append(session.ssl is not None)
        return "250 OK"


@pytest.fixture
def smtp_server():
    handler = Collector()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    yield controller, handler
    controller.stop()


@pytest.fixture
def settings(smtp_server):
    controller, _ = smtp_server
    return {"MAIL_URL": f"smtp://127.0.0.1:{controller.port}", "MAIL_RETRY_DELAY": 0.01,
            "MAIL_FROM": "svc <no-reply@auth.example>"}


def link_in(message, path):
    text = message.get_body(("plain",)).get_content()
    return re.search(r"http://\S+" + re.escape(path) + r"\?token=([\w-]+)", text).group(1)


def drain(app):
    drained(app.extensions["svc-outbox"])


def ask_reset(client, address):
    assert client.post("/api/v2/auth/forgot-password", json={"email": address}).status_code == 202


def forgot(client, app, address):
    ask_reset(client, address)
    drain(app)


def reset(client, token, password="a brand new passphrase"):
    return client.post("/api/v2/auth/reset-password",
                       json={"token": token, "new_password": password})


def test_the_reset_mail_arrives_as_text_and_html_and_its_link_works_once(
        app, client, user, smtp_server):
    _, inbox = smtp_server
    forgot(client, app, user.email)
    [message] = inbox.messages
    assert message["To"] == user.email and message["From"] == "svc <no-reply@auth.example>"
    assert message.get_body(("html",)) is not None
    token = link_in(message, "/reset-password")
    assert reset(client, token).status_code == 200
    assert reset(client, token, "another new passphrase").status_code == 400


def test_an_older_link_fails_after_a_newer_request(app, client, user, smtp_server):
    _, inbox = smtp_server
    forgot(client, app, user.email)
    forgot(client, app, user.email)
    older, newer = (link_in(m, "/reset-password") for m in inbox.messages)
    assert reset(client, older).status_code == 400
    assert reset(client, newer).status_code == 200


def test_a_link_fails_after_the_password_changed(app, client, user, smtp_server):
    _, inbox = smtp_server
    forgot(client, app, user.email)
    forgot(client, app, user.email)
    first_token = link_in(inbox.messages[0], "/reset-password")
    # The newest link changes the password; the first, already superseded, stays dead.
    assert reset(client, link_in(inbox.messages[1], "/reset-password")).status_code == 200
    assert reset(client, first_token).status_code == 400
    drain(app)
    assert inbox.messages[-1]["Subject"] == "Your password was changed"


def test_a_refused_delivery_is_retried(app, client, user, smtp_server):
    _, inbox = smtp_server
    inbox.refuse_first = 2
    forgot(client, app, user.email)
    assert len(inbox.messages) == 1  # the third attempt went through


# A worker killed between the server's "250 OK" and recording the job ------------------------

def sent_then_killed(app):
    """This process's worker claims the pending job and sends it, the server answers "250 OK",
    and the process dies before recording that: the job stays claimed until its lease ends."""
    outbox = app.extensions["svc-outbox"]
    with app.app_context():
        job_id = db.session.scalars(select(MailJob.id).where(MailJob.status == "pending")
                                    .order_by(MailJob.created_at)).first()
        job = lanes.claim(outbox.lane(MAIL), job_id, "dead-host:1:0", system_clock(),
                          outbox.lease)
        assert job is not None
        assert lanes.attempt(outbox.lane(MAIL), job).status == "sent"  # never recorded
        db.session.remove()


def after_the_lease(next_app):
    """The next process, whose worker looks once the dead one's lease is over."""
    other = next_app()
    outbox = other.extensions["svc-outbox"]
    outbox.clock = lambda: system_clock() + outbox.lease + timedelta(seconds=1)
    drain(other)
    return other


def as_sent(raw):
    """A message as the server took it: its headers but the Date, and its body's bytes."""
    head, _, body = raw.partition(b"\r\n\r\n")
    parsed = email.message_from_bytes(head + b"\r\n\r\n", policy=policy.default)
    return [(name, value) for name, value in parsed.items() if name != "Date"], body


def signup(client, user):
    assert client.post("/api/v2/auth/signup", json={
        "email": "new@example.com", "password": "a long enough passphrase"}).status_code == 201


def confirm(client, token):
    return open_mailed_link(client, f"/confirm-email?token={token}")


MAILS = {  # what promises the mail, the path of its link, and what follows the link
    "reset": (lambda client, user: ask_reset(client, user.email), "/reset-password",
              lambda client, token: reset(client, token)),
    "confirmation": (signup, "/confirm-email", confirm),
}


@pytest.mark.parametrize("mail", list(MAILS))
def test_a_mail_sent_again_after_its_worker_died_is_the_same_message_with_one_working_link(
        app, client, user, smtp_server, next_app, mail):
    _, inbox = smtp_server
    promise, path, follow = MAILS[mail]
    app.extensions["svc-outbox"].stop()  # this process's worker is the one that dies
    promise(client, user)
    sent_then_killed(app)
    after_the_lease(next_app)
    first, second = (as_sent(raw) for raw in inbox.raw)
    assert first == second  # the same headers (Message-ID too) and body, byte for byte
    [job] = jobs(app)
    assert inbox.messages[0]["Message-ID"].strip().startswith(f"<{job.id}.")
    token = link_in(inbox.messages[0], path)
    assert follow(client, token).status_code == 200
    assert follow(client, token).status_code == 400  # used once


def test_the_link_a_job_keeps_for_its_retries_is_sealed_and_gone_once_sent(
        app, client, user, smtp_server, next_app):
    _, inbox = smtp_server
    app.extensions["svc-outbox"].stop()
    ask_reset(client, user.email)
    sent_then_killed(app)
    token = link_in(inbox.messages[0], "/reset-password")
    [job] = jobs(app)
    assert job.token_sealed and token.encode() not in job.token_sealed
    assert token not in str(job.payload)
    after_the_lease(next_app)
    [job] = jobs(app)
    assert (job.status, job.attempts, job.token_sealed, job.payload) == ("sent", 2, None, {})


def test_a_notice_sent_again_is_the_same_message_too(app, user, smtp_server, next_app):
    _, inbox = smtp_server
    app.extensions["svc-outbox"].stop()
    with app.app_context():
        schedule(MailJob.PASSWORD_CHANGED, {"to": user.email})
        db.session.commit()
    sent_then_killed(app)
    after_the_lease(next_app)
    first, second = (as_sent(raw) for raw in inbox.raw)
    assert first == second


def test_a_mail_sent_again_leaves_the_link_of_a_newer_request_working(
        app, client, user, smtp_server, next_app):
    """The person asked again before the dead worker's lease ended: the newer link works, and
    the first mail's second copy carries the first link, dead like its first copy's."""
    _, inbox = smtp_server
    app.extensions["svc-outbox"].stop()
    ask_reset(client, user.email)
    sent_then_killed(app)
    ask_reset(client, user.email)  # pending until the next process looks
    after_the_lease(next_app)
    first, newer, again = inbox.messages  # the newer job was due before the lease ended
    assert reset(client, link_in(first, "/reset-password")).status_code == 400
    assert reset(client, link_in(newer, "/reset-password")).status_code == 200
    assert as_sent(inbox.raw[0]) == as_sent(inbox.raw[2])


def test_a_mail_sent_again_once_its_link_expired_unused_has_a_new_link(
        app, client, user, smtp_server, next_app, clock):
    _, inbox = smtp_server
    app.extensions["svc-outbox"].stop()
    ask_reset(client, user.email)
    sent_then_killed(app)
    clock.advance(app.config["RESET_TOKEN_TTL"] + 1)
    after_the_lease(next_app)
    first, second = inbox.messages
    assert first["Message-ID"] != second["Message-ID"]  # another message: no system drops it
    assert reset(client, link_in(first, "/reset-password")).status_code == 400
    assert reset(client, link_in(second, "/reset-password")).status_code == 200


def test_a_link_kept_under_another_secret_key_is_made_again(app, client, user, smtp_server,
                                                            next_app):
    """SVC_SECRET_KEY changed while the job waited: its kept link cannot be read, so the retry
    makes a new one (as before links were kept) rather than failing until it runs out."""
    _, inbox = smtp_server
    app.extensions["svc-outbox"].stop()
    ask_reset(client, user.email)
    sent_then_killed(app)
    other = next_app()
    change_settings(other, SECRET_KEY="another key")
    outbox = other.extensions["svc-outbox"]
    outbox.clock = lambda: system_clock() + outbox.lease + timedelta(seconds=1)
    drain(other)
    first, second = inbox.messages
    assert reset(client, link_in(second, "/reset-password")).status_code == 200


class TestServerDown:
    @pytest.fixture
    def port(self):
        return free_port()

    @pytest.fixture
    def settings(self, port):
        return {"MAIL_URL": f"smtp://127.0.0.1:{port}", "MAIL_RETRY_DELAY": 0.01,
                "MAIL_ATTEMPTS": 3}

    def test_the_request_succeeds_and_the_failure_is_logged_without_the_link(
            self, app, client, user, caplog):
        caplog.set_level("INFO")
        response = client.post("/api/v2/auth/forgot-password", json={"email": user.email})
        assert response.status_code == 202
        drain(app)
        attempts = [r for r in caplog.records if "delivery attempt" in r.getMessage()]
        assert len(attempts) == 3
        assert "failed after 3 attempts" in caplog.text
        assert "token=" not in caplog.text and "reset-password" not in caplog.text

    def test_once_the_server_is_back_retry_delivers_the_failed_mail(self, app, client, user,
                                                                     port):
        """Issue 13, item 3: a mail whose attempts ran out is kept, not dropped."""
        client.post("/api/v2/auth/forgot-password", json={"email": user.email})
        drain(app)
        runner = app.test_cli_runner()
        assert "failed 1" in runner.invoke(args=["outbox", "status"]).output
        handler = Collector()
        controller = Controller(handler, hostname="127.0.0.1", port=port)
        controller.start()
        try:
            assert "1 mail jobs are due now" in runner.invoke(
                args=["outbox", "retry", "--failed"]).output
            drain(app)
        finally:
            controller.stop()
        [message] = handler.messages
        assert reset(client, link_in(message, "/reset-password")).status_code == 200
        assert "failed 0" in runner.invoke(args=["outbox", "status"]).output


def make_certificate(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "smtp.crt", tmp_path / "smtp.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class TestStartTlsAndLogin:
    """A server that offers STARTTLS and requires AUTH: we upgrade, verify its certificate
    (trusted here through SSL_CERT_FILE) and log in."""

    @pytest.fixture
    def smtp_server(self, tmp_path, monkeypatch):
        cert_path, key_path = make_certificate(tmp_path)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert_path))
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(cert_path, key_path)
        logins = []

        def authenticator(server, session, envelope, mechanism, auth_data):
            ok = isinstance(auth_data, LoginPassword) and (
                auth_data.login, auth_data.password) == (b"mailer", b"s3cret pass")
            logins.append(ok)
            return AuthResult(success=ok)

        handler = Collector()
        controller = Controller(handler, hostname="127.0.0.1", port=free_port(),
                                tls_context=tls, require_starttls=True,
                                authenticator=authenticator, auth_required=True)
        controller.start()
        controller.logins = logins
        yield controller, handler
        controller.stop()

    @pytest.fixture
    def settings(self, smtp_server):
        controller, _ = smtp_server
        return {"MAIL_URL": f"smtp://mailer:s3cret%20pass@127.0.0.1:{controller.port}",
                "MAIL_RETRY_DELAY": 0.01}

    def test_mail_goes_over_starttls_with_the_credentials(self, app, client, user, smtp_server):
        controller, inbox = smtp_server
        forgot(client, app, user.email)
        assert inbox.tls_used == [True]
        assert controller.logins == [True]
        assert client.post("/api/v2/auth/login", json={
            "email": user.email, "password": PASSWORD}).status_code == 200
