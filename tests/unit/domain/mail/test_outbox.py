"""The outbox and a request's answer: a request's mail job is committed with what it reports, and
the worker is woken only once the answer has been sent, so an answer that mails takes the time of
one that does not (issue 12, item 7); nothing a request promised is lost when its page fails
afterwards, or when the process dies (issue 13, item 3)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import event, select

from app.domain.accounts import recovery
from app.domain.audit import ClientInfo
from app.extensions import db
from app.models import MailJob
from tests.support.apps import drained, mailing
from tests.support.pages import submit

NEW = "a brand new passphrase"
# Long enough that a mail sent within the test was sent because the worker was woken.
POLL_SECONDS = 30


@pytest.fixture
def settings():
    return {"OUTBOX_POLL_SECONDS": POLL_SECONDS}


def sent(app):
    return list(mailing(app).transport.sent)


def sent_without_waking(app, count=1, seconds=5.0):
    """What the worker has sent once it has sent `count` messages, or `seconds` passed; without
    waking it (as drain() would)."""
    deadline = time.monotonic() + seconds
    while len(sent(app)) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    return sent(app)


def jobs(app):
    with app.app_context():
        return [(j.kind, j.status) for j in db.session.scalars(select(MailJob))]


def test_the_mail_work_starts_only_after_the_answer_has_been_sent(app, client, user):
    # Read the answer's headers and first chunk, as a server would before it has sent it all.
    answer = client.post("/api/v2/auth/forgot-password", json={"email": user.email},
                         buffered=False)
    assert answer.status_code == 202
    assert jobs(app) == [("reset_password", "pending")]  # promised, in the request's commit
    time.sleep(0.3)  # woken at the commit, the worker would have sent it by now
    assert sent(app) == []  # nothing was woken, so nothing competed with the answer
    answer.close()  # the server has sent the answer and closes it
    assert [m["Subject"] for m in sent_without_waking(app)] == ["Reset your password"]


def test_reading_the_whole_answer_also_starts_the_mail_work(app, client, user):
    answer = client.post("/api/v2/auth/resend-confirmation", json={"email": user.email},
                         buffered=False)
    time.sleep(0.3)
    assert sent(app) == []
    assert answer.get_data()  # the last chunk taken: every byte is out
    assert [m["Subject"] for m in sent_without_waking(app)] == ["Confirm your email address"]


def test_outside_a_request_the_commit_wakes_the_worker(app, user):
    with app.app_context():
        recovery.request_reset(user.email, ClientInfo("127.0.0.1", "cli"))
    assert [m["Subject"] for m in sent_without_waking(app)] == ["Reset your password"]


def test_forgot_password_looks_no_account_up_in_the_request(app, client, user, make_user):
    """The request writes the same job row for every address; the lookup is the job's."""
    statements: list[str] = []
    with app.app_context():
        engine = db.engine

    def seen(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        statements.append(statement.lower())

    event.listen(engine, "before_cursor_execute", seen)
    try:
        known = client.post("/api/v2/auth/forgot-password", json={"email": user.email},
                            buffered=False)
        by_known, statements[:] = list(statements), []
        unknown = client.post("/api/v2/auth/forgot-password",
                              json={"email": "nobody@example.com"}, buffered=False)
        by_unknown = list(statements)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert (known.status_code, known.data) == (unknown.status_code, unknown.data)
    assert by_known == by_unknown  # the same statements, whatever the address
    assert not [s for s in by_known if "users" in s or "one_time_tokens" in s]
    assert any("insert into mail_jobs" in s for s in by_known)
    known.close()
    unknown.close()
    drained(app.extensions["svc-outbox"])
    assert [m["To"] for m in sent(app)] == [user.email]
    assert sorted(jobs(app)) == [("reset_password", "sent"), ("reset_password", "skipped")]


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


def test_the_password_changed_notice_survives_an_error_page(reset_page_breaks, user, app):
    assert submit(reset_page_breaks, "/reset-password", {"new_password": NEW}).status_code == 500
    assert sent_without_waking(app, 2)[-1]["Subject"] == "Your password was changed"


def test_a_job_survives_an_exception_that_escapes_the_app(app, client, user):
    def commit_then_break() -> str:  # a view with no error handler between it and the server
        recovery.request_confirmation(user.email, ClientInfo("127.0.0.1", "test"))
        raise RuntimeError("the view broke after scheduling")

    app.add_url_rule("/test/commit-then-break", view_func=commit_then_break)
    app.config["PROPAGATE_EXCEPTIONS"] = True
    with pytest.raises(RuntimeError, match="broke after scheduling"):
        client.get("/test/commit-then-break")
    assert [m["Subject"] for m in sent_without_waking(app)] == ["Confirm your email address"]


def test_a_request_whose_transaction_fails_promises_nothing(app, client, user, monkeypatch):
    """The job is in the request's transaction: a database error there is a 503, and no mail
    is promised (nor sent later)."""
    from sqlalchemy.exc import OperationalError

    def unreachable(*args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        raise OperationalError("INSERT", {}, Exception("server closed the connection"))

    monkeypatch.setattr("app.domain.mail.outbox.insert_values", unreachable)
    answer = client.post("/api/v2/auth/forgot-password", json={"email": user.email})
    monkeypatch.undo()
    assert answer.status_code == 503
    assert jobs(app) == []
