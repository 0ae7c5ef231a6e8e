"""`flask --app wsgi purge` on a database the size of a real deployment's: more ended sessions
than a driver takes parameters in one statement (PostgreSQL: 65,535), each step in batches by an
index, a failing step that does not stop the others, and an account erased once however often the
purge runs (issue 33, findings 19 and 20)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, inspect, select

from app.domain import retention
from app.domain.audit import ClientInfo
from app.domain.clock import system_clock
from app.domain.lifecycle import leaving
from app.extensions import db
from app.models import AccountEvent, AuditEvent, AuthSession, MailJob, RefreshToken, User
from tests.support.apps import drained

DAY = timedelta(days=1)
ENDED = 70_000  # past 65,535: one IN list of them all is refused by PostgreSQL's driver


def purge(app):
    return app.test_cli_runner().invoke(args=["purge"])


def count(model, *where):
    return db.session.scalar(select(func.count()).select_from(model).where(*where))


@pytest.fixture
def ended_sessions(app, user, clock, database):
    """ENDED sessions of `user` that ended two days ago (half revoked, half expired), each
    with a refresh token, and one live session; written with PostgreSQL's COPY."""
    if database != "postgresql":
        pytest.skip("the driver's parameter limit is PostgreSQL's")
    at = clock.now.replace(tzinfo=None)  # naive UTC, as the columns hold it
    with app.app_context():
        driver = db.session.connection().connection.driver_connection
        with driver.cursor() as cursor:
            with cursor.copy("COPY sessions (id, user_id, provider, created_at, last_used_at,"
                             " expires_at, revoked_at) FROM STDIN") as copy:
                for number in range(ENDED):
                    copy.write_row((f"ended-{number:08d}", user.id, "password", at - 30 * DAY,
                                    at - 2 * DAY, at - 2 * DAY if number % 2 else at + DAY,
                                    None if number % 2 else at - 2 * DAY))
                copy.write_row(("live", user.id, "password", at, at, at + DAY, None))
            with cursor.copy("COPY refresh_tokens (session_id, token_hash, created_at,"
                             " expires_at) FROM STDIN") as copy:
                for number in range(ENDED):
                    copy.write_row((f"ended-{number:08d}", f"{number:064d}", at - 3 * DAY,
                                    at - 2 * DAY))
                copy.write_row(("live", "live".ljust(64, "0"), at, at + DAY))
        db.session.commit()
        assert count(AuthSession) == ENDED + 1
    return user


def add_old_rows(clock):
    """A mail job and an audit event past their retention: steps after the sessions'."""
    finished = system_clock() - 30 * DAY
    db.session.add(MailJob(id="old-mail", kind=MailJob.PASSWORD_CHANGED, payload={},
                           status="sent", attempts=1, next_attempt_at=finished,
                           created_at=finished, finished_at=finished))
    db.session.add(AuditEvent(at=clock.now - 400 * DAY, event="old-event"))


def test_purge_deletes_more_ended_sessions_than_one_statement_takes(app, ended_sessions, clock):
    with app.app_context():
        add_old_rows(clock)
        db.session.commit()
    result = purge(app)
    assert result.exit_code == 0, result.output
    assert f"Deleted {ENDED} ended sessions." in result.output
    with app.app_context():
        assert list(db.session.scalars(select(AuthSession.id))) == ["live"]
        assert count(RefreshToken) == 1
        # The steps after it ran too.
        assert count(MailJob) == 0 and count(AuditEvent, AuditEvent.event == "old-event") == 0


# Events kept for the whole test: each `user.deleted` the erasure emitted is still there to count.
@pytest.mark.parametrize("settings", [{"MAIL_RETENTION_DAYS": 3650}])
def test_an_erased_account_is_erased_once_over_three_runs(app, ended_sessions, make_user,
                                                         clock, settings):
    erased_three_times(app, make_user, clock)


@pytest.mark.parametrize("settings", [{"MAIL_RETENTION_DAYS": 3650}])
def test_an_erased_account_is_erased_once_on_a_small_database_too(app, make_user, clock,
                                                                  settings):
    erased_three_times(app, make_user, clock)


def erased_three_times(app, make_user, clock):
    """Three purges after an account's grace period: it is erased by the first alone."""
    leaver = make_user("leaver@example.com")
    with app.app_context():
        leaving.schedule_deletion(db.session.get(User, leaver.id), ClientInfo())
    # The leaving's mail and event are sent first: a purge that runs while the outbox delivers
    # the same account's events can lose its erase step to their row locks (the next purge
    # erases it), which is not what this test is about.
    drained(app.extensions["svc-outbox"])
    clock.advance((leaving_grace(app) + DAY).total_seconds())
    outputs = []
    for _ in range(3):
        result = purge(app)
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    erased = "accounts erased after their deletion's grace period."
    assert [f"Deleted 1 {erased}" in output for output in outputs] == [True, False, False]
    assert all(f"Deleted 0 {erased}" in output for output in outputs[1:])
    with app.app_context():
        user = db.session.get(User, leaver.id)
        assert user.email == f"{leaver.id}@erased.invalid" and user.erased_at is not None
        assert count(AuditEvent, AuditEvent.event == "account_erased") == 1
        assert count(AccountEvent, AccountEvent.type == "user.deleted") == 1
        # Still closed: nothing re-enables an erased account.
        assert user.disabled_at is not None and user.deletion_scheduled_at is not None


def leaving_grace(app):
    with app.app_context():
        return leaving.grace()


def test_a_failing_step_does_not_stop_the_others(app, clock, monkeypatch):
    def broken():
        raise RuntimeError("the step broke\nwith a long second line")

    monkeypatch.setattr(retention, "STEPS", [
        retention.Step("first things", lambda: 2), retention.Step("ended sessions", broken),
        *retention.STEPS[2:]])
    with app.app_context():
        add_old_rows(clock)
        db.session.commit()
    result = purge(app)
    assert result.exit_code == 1
    assert "Deleted 2 first things." in result.output
    assert "Failed to delete ended sessions: RuntimeError: the step broke" in result.output
    assert "long second line" not in result.output
    assert "Deleted 1 audit events past their retention." in result.output  # the last step ran
    assert "1 of " in result.output and "steps failed: ended sessions" in result.output


# Each step's predicate, as (table, column): the column an index must lead with.
PREDICATES = [
    ("users", "erased_at"), ("sessions", "expires_at"), ("sessions", "revoked_at"),
    ("refresh_tokens", "session_id"), ("failure_counters", "window_start"),
    ("rate_limit_counters", "expires_at"), ("handoff_codes", "expires_at"),
    ("pushed_requests", "expires_at"), ("one_time_tokens", "expires_at"),
    ("pending_sign_ins", "expires_at"), ("passkey_challenges", "expires_at"),
    ("idempotent_answers", "created_at"), ("mail_jobs", "finished_at"),
    ("event_deliveries", "finished_at"), ("event_deliveries", "event_id"),
    ("account_events", "dispatched_at"), ("audit_events", "at"),
]


def test_each_step_of_the_purge_finds_its_rows_by_an_index(app):
    with app.app_context():
        inspector = inspect(db.engine)
        missing = [(table, column) for table, column in PREDICATES
                   if not any(index["column_names"][:1] == [column]
                              for index in inspector.get_indexes(table))]
    assert missing == []
