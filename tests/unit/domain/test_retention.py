"""`flask --app wsgi purge`: what is past its retention goes, everything else stays."""

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.db import batches
from app.domain import retention
from app.extensions import db
from app.models import AuditEvent, HandoffCode, OneTimeToken, PushedRequest

HOUR = timedelta(hours=1)
DAY = timedelta(days=1)


def run_purge(app):
    result = app.test_cli_runner().invoke(args=["purge"])
    assert result.exit_code == 0, result.output
    return result.output


def add_code(user_id, name, expires_at):
    db.session.add(HandoffCode(code_hash=name.ljust(64, "0"), user_id=user_id, provider="password",
                               redirect_uri="https://symbols.example/cb", code_challenge=None,
                               created_at=expires_at - timedelta(seconds=60),
                               expires_at=expires_at))


def add_token(user_id, name, expires_at, used=False):
    db.session.add(OneTimeToken(token_hash=name.ljust(64, "0"), user_id=user_id,
                                purpose=OneTimeToken.RESET_PASSWORD, email="ada@example.com",
                                created_at=expires_at - HOUR, expires_at=expires_at,
                                used_at=expires_at - HOUR if used else None))


def add_pushed(name, expires_at):
    db.session.add(PushedRequest(handle_hash=name.ljust(64, "0"), client_id="symbols", params="{}",
                                 created_at=expires_at - timedelta(minutes=10),
                                 expires_at=expires_at))


def add_event(name, at):
    db.session.add(AuditEvent(at=at, event=name))


def add_mail_job(name, status, finished_days_ago):
    from app.domain.clock import system_clock
    from app.models import MailJob

    finished = system_clock() - timedelta(days=finished_days_ago)
    db.session.add(MailJob(id=name, kind=MailJob.PASSWORD_CHANGED, payload={}, status=status,
                           attempts=1, next_attempt_at=finished, created_at=finished,
                           finished_at=finished))


def names(column):
    return sorted(db.session.scalars(select(column)))


def test_purge_deletes_what_is_past_its_retention_and_keeps_the_rest(app, user, clock):
    at = clock.now
    with app.app_context():
        add_code(user.id, "c-expired-25h", at - 25 * HOUR)
        add_code(user.id, "c-expired-23h", at - 23 * HOUR)
        add_code(user.id, "c-live", at + timedelta(seconds=30))
        add_pushed("p-expired-25h", at - 25 * HOUR)
        add_pushed("p-expired-1s", at - timedelta(seconds=1))
        add_pushed("p-live", at + timedelta(seconds=30))
        add_token(user.id, "t-used-expired-25h", at - 25 * HOUR, used=True)
        add_token(user.id, "t-expired-25h", at - 25 * HOUR)
        add_token(user.id, "t-used-expires-later", at + HOUR, used=True)
        add_token(user.id, "t-live", at + HOUR)
        add_event("e-366-days", at - 366 * DAY)
        add_event("e-364-days", at - 364 * DAY)
        add_mail_job("m-sent-8-days", "sent", 8)
        add_mail_job("m-sent-6-days", "sent", 6)
        add_mail_job("m-failed-8-days", "failed", 8)
        db.session.commit()

    output = run_purge(app)
    assert "Deleted 0 ended sessions." in output
    assert "Deleted 1 expired handoff codes." in output
    assert "Deleted 2 expired reset and confirmation tokens." in output
    assert "Deleted 2 expired pushed authorization requests." in output  # at once
    assert "Deleted 1 audit events past their retention." in output
    assert "Deleted 1 mail jobs finished past SVC_MAIL_RETENTION_DAYS." in output
    with app.app_context():
        assert [name.rstrip("0") for name in names(HandoffCode.code_hash)] == [
            "c-expired-23h", "c-live"]
        assert [name.rstrip("0") for name in names(PushedRequest.handle_hash)] == ["p-live"]
        assert [name.rstrip("0") for name in names(OneTimeToken.token_hash)] == [
            "t-live", "t-used-expires-later"]
        assert names(AuditEvent.event) == ["e-364-days"]
        from app.models import MailJob
        assert names(MailJob.id) == ["m-failed-8-days", "m-sent-6-days"]


@pytest.mark.parametrize("settings", [{"AUDIT_RETENTION_DAYS": 0, "CODE_RETENTION_HOURS": 72}])
def test_the_retention_settings_hold(app, user, clock, settings):
    at = clock.now
    with app.app_context():
        add_event("e-ten-years", at - 3650 * DAY)
        add_code(user.id, "c-expired-2-days", at - 2 * DAY)
        add_code(user.id, "c-expired-4-days", at - 4 * DAY)
        db.session.commit()
    output = run_purge(app)
    assert "Deleted 0 audit events" in output and "Deleted 1 expired handoff codes." in output
    with app.app_context():
        assert names(AuditEvent.event) == ["e-ten-years"]


def test_large_purges_go_in_batches(app, clock, monkeypatch):
    monkeypatch.setattr(batches, "BATCH", 3)
    with app.app_context():
        for number in range(7):
            add_event(f"old-{number}", clock.now - 400 * DAY)
        db.session.commit()
    assert "Deleted 7 audit events" in run_purge(app)
    with app.app_context():
        assert db.session.scalar(select(func.count()).select_from(AuditEvent)) == 0


def test_negative_retentions_stop_the_start(monkeypatch, tmp_path):
    from app import create_app

    monkeypatch.setenv("SVC_AUDIT_RETENTION_DAYS", "-1")
    with pytest.raises(RuntimeError, match="SVC_AUDIT_RETENTION_DAYS"):
        create_app({"INSTANCE_PATH": str(tmp_path)})


def test_delivered_events_go_after_the_retention_and_a_failed_one_keeps_its_event(app, clock):
    from app.domain.clock import now, system_clock
    from app.models import AccountEvent, Delivery
    days = app.config["MAIL_RETENTION_DAYS"]
    with app.app_context():
        long_ago = system_clock() - timedelta(days=days + 1)
        for name, status in (("sent", "sent"), ("failed", "failed")):
            db.session.add(AccountEvent(id=f"evt_{name}", type="user.updated", user_id="u",
                                        occurred_at=now(), data={}, dispatched_at=now()))
            db.session.add(Delivery(event_id=f"evt_{name}", site="s", sid="", kind="webhook",
                                    status=status, attempts=1, next_attempt_at=long_ago,
                                    created_at=long_ago, finished_at=long_ago))
        db.session.commit()
    clock.advance(timedelta(days=days + 1).total_seconds())
    with app.app_context():
        for step in retention.STEPS:
            step.run()
        assert set(db.session.scalars(select(AccountEvent.id))) == {"evt_failed"}
        assert [d.status for d in db.session.scalars(select(Delivery))] == ["failed"]
