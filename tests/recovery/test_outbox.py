"""The outbox and a request's answer: mail work starts only once the answer has been sent, so an
answer that mails takes the time of one that does not (issue 12, item 7); nothing a request
scheduled is lost when its page fails afterwards, or when the process exits."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from app.domain import recovery
from app.domain.audit import ClientInfo
from app.domain.mail import outbox
from tests.pages.conftest import submit

ROOT = Path(__file__).resolve().parents[2]
NEW = "a brand new passphrase"


def test_the_mail_work_starts_only_after_the_answer_has_been_sent(client, user, mailbox):
    # Read the answer's headers and first chunk, as a server would before it has sent it all.
    answer = client.post("/api/v2/auth/forgot-password", json={"email": user.email},
                         buffered=False)
    assert answer.status_code == 202
    assert mailbox.messages == []  # nothing was handed to the outbox, so nothing competed
    answer.close()  # the server has sent the answer and closes it
    assert [m["Subject"] for m in mailbox.to(user.email)] == ["Reset your password"]


def test_reading_the_whole_answer_also_starts_the_mail_work(client, user, mailbox):
    answer = client.post("/api/v2/auth/resend-confirmation", json={"email": user.email},
                         buffered=False)
    assert mailbox.messages == []
    assert answer.get_data()  # the last chunk taken: every byte is out
    assert [m["Subject"] for m in mailbox.to(user.email)] == ["Confirm your email address"]


def test_outside_a_request_a_job_is_handed_over_at_once(app, user, mailbox):
    with app.app_context():
        recovery.request_reset(user.email, ClientInfo("127.0.0.1", "cli"))
    assert [m["Subject"] for m in mailbox.to(user.email)] == ["Reset your password"]


@pytest.fixture
def reset_page_breaks(client, user, mailbox, monkeypatch):
    """A reset through the pages whose answer fails after the new password was committed."""
    submit(client, "/forgot-password", {"email": user.email})
    client.get(mailbox.last_link(user.email, "/reset-password").removeprefix(
        "http://127.0.0.1:5000"))

    def broken() -> None:
        raise RuntimeError("the page broke after the commit")

    monkeypatch.setattr("app.pages.auth.browser.sign_out", broken)
    return client


def test_the_password_changed_notice_survives_an_error_page(reset_page_breaks, user, mailbox):
    assert submit(reset_page_breaks, "/reset-password", {"new_password": NEW}).status_code == 500
    assert mailbox.to(user.email)[-1]["Subject"] == "Your password was changed"


def test_a_job_survives_an_exception_that_escapes_the_app(app, client, user, mailbox):
    def commit_then_break() -> str:  # a view with no error handler between it and the server
        recovery.request_confirmation(user.email, ClientInfo("127.0.0.1", "test"))
        raise RuntimeError("the view broke after scheduling")

    app.add_url_rule("/test/commit-then-break", view_func=commit_then_break)
    app.config["PROPAGATE_EXCEPTIONS"] = True
    with pytest.raises(RuntimeError, match="broke after scheduling"):
        client.get("/test/commit-then-break")
    assert [m["Subject"] for m in mailbox.to(user.email)] == ["Confirm your email address"]


def test_a_process_that_exits_first_finishes_the_mail_it_holds(tmp_path):
    """A recycled or stopped worker exits right after its last answer: its mail still goes."""
    script = textwrap.dedent("""
        import sys, time
        from app import create_app
        from app.domain.mail import Message, outbox

        folder = sys.argv[1]
        app = create_app({"INSTANCE_PATH": folder, "SECRET_KEY": "t",
                          "SQLALCHEMY_DATABASE_URI": "sqlite://",
                          "MAIL_URL": "file://" + folder + "/mail"})

        def job():
            time.sleep(0.5)  # still at work when the main thread ends
            outbox().send(Message("ada@example.com", "Last words", "text", "<p>html</p>"))

        with app.app_context():
            outbox().run_later(job)
    """)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "mail").glob("*.eml"))) == 1


def test_a_job_from_the_outbox_thread_is_not_held(app, user, mailbox):
    """Jobs run on the outbox's thread, outside any request: what they schedule goes at once."""
    def job() -> None:
        recovery.request_confirmation(user.email, ClientInfo("127.0.0.1", "job"))

    with app.app_context():
        outbox().run_later(job)
    assert [m["Subject"] for m in mailbox.to(user.email)] == ["Confirm your email address"]
