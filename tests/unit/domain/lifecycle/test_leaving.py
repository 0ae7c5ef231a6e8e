"""An account's own life through the API (issue 24): a new address, leaving, and its data."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import String, cast, inspect, select

from app.domain import retention
from app.extensions import db
from app.models import User
from tests.support.api import mailed_token as _link
from tests.support.http import bearer_of as bearer
from tests.support.pages import submit

PASSWORD_PROOF = "correct horse battery staple"


def _open(client, path, token):
    """Open a mailed link's page, then press its button (opening alone changes nothing)."""
    page = client.get(f"{path}?token={token}")
    assert page.status_code == 200 and "<button" in page.text
    return submit(client, f"{path}?token={token}", {"token": token})


def test_a_new_address_changes_only_when_its_link_is_opened(app, client, user, login,
                                                            mailbox):
    tokens = login(user)
    asked = client.post("/api/v2/auth/email", headers=bearer(tokens),
                        json={"new_email": "ada@new.example", "password": user.password})
    assert asked.status_code == 202, asked.get_json()
    with app.app_context():
        assert db.session.get(User, user.id).email == "ada@example.com"
    token = _link(mailbox, "ada@new.example", "/email-change")
    with app.app_context():
        assert db.session.get(User, user.id).email == "ada@example.com"  # opening is not using
    done = _open(client, "/email-change", token)
    assert done.status_code == 200 and "ada@new.example" in done.text
    verified = client.get("/api/v2/auth/verify", headers=bearer(tokens)).get_json()
    assert verified["user"]["email"] == "ada@new.example"
    assert client.post("/api/v2/auth/login", json={"email": "ada@new.example",
                                                   "password": user.password}).status_code == 200


def test_the_old_address_can_undo_the_change_and_end_every_session(app, client, user, login,
                                                                   mailbox):
    tokens = login(user)
    client.post("/api/v2/auth/email", headers=bearer(tokens),
                json={"new_email": "thief@evil.example", "password": user.password})
    _open(client, "/email-change", _link(mailbox, "thief@evil.example", "/email-change"))
    undo = _link(mailbox, "ada@example.com", "/email-change/undo")
    assert _open(client, "/email-change/undo", undo).status_code == 200
    with app.app_context():
        assert db.session.get(User, user.id).email == "ada@example.com"
    assert client.get("/api/v2/auth/verify", headers=bearer(tokens)).status_code == 401


@pytest.mark.parametrize("new_email", ["bob@example.com", "BOB@Example.com", "bob@EXAMPLE.COM"])
def test_a_taken_address_gets_the_same_answer_and_changes_nothing(app, client, user, login,
                                                                  make_user, mailbox, new_email):
    make_user("bob@example.com")
    tokens = login(user)
    taken = client.post("/api/v2/auth/email", headers=bearer(tokens),
                        json={"new_email": new_email, "password": user.password})
    free = client.post("/api/v2/auth/email", headers=bearer(tokens),
                       json={"new_email": "free@example.com", "password": user.password})
    assert taken.status_code == free.status_code == 202
    assert taken.get_json() == free.get_json()
    assert [m["Subject"] for m in mailbox.to("bob@example.com")] == [
        "An address change was refused"]


@pytest.mark.parametrize("body", [{"new_email": "x@example.com"},
                                  {"new_email": "x@example.com", "password": "wrong one"},
                                  {"new_email": "not an address", "password": PASSWORD_PROOF},
                                  {"new_email": "x@exa\u202emple.com", "password": PASSWORD_PROOF}])
def test_a_change_needs_the_password_and_a_real_address(app, client, user, login, mailbox,
                                                        body):
    tokens = login(user)
    refused = client.post("/api/v2/auth/email", headers=bearer(tokens), json=body)
    assert refused.status_code in (401, 403, 422), refused.get_json()
    assert mailbox.to("x@example.com") == []


def test_leaving_ends_everything_at_once_and_the_link_restores(app, client, user, login,
                                                               mailbox):
    tokens = login(user)
    left = client.delete("/api/v2/auth/account", headers=bearer(tokens),
                          json={"password": user.password})
    assert left.status_code == 202, left.get_json()
    assert client.get("/api/v2/auth/verify", headers=bearer(tokens)).status_code == 401
    assert client.post("/api/v2/auth/login", json={"email": user.email,
                                                   "password": user.password}).status_code == 401
    assert client.post("/api/v2/auth/signup", json={"email": user.email,
                                                    "password": "another long passphrase"}
                       ).status_code == 409
    restore = _link(mailbox, user.email, "/account/restore")
    assert _open(client, "/account/restore", restore).status_code == 200
    assert client.post("/api/v2/auth/login", json={"email": user.email,
                                                   "password": user.password}).status_code == 200


def test_after_the_grace_period_purge_erases_every_trace(app, client, clock, make_user, login,
                                                        mailbox):
    user = make_user("zelda.unique@example.com", full_name="Zelda Quintessence")
    tokens = login(user)
    client.delete("/api/v2/auth/account", headers=bearer(tokens),
                   json={"password": user.password})
    assert mailbox.messages  # the mail went before the purge
    clock.advance(timedelta(days=app.config["ACCOUNT_DELETION_GRACE_DAYS"] + 1).total_seconds())
    with app.app_context():
        for step in retention.STEPS:
            step.run()
        leftovers = []
        for table in db.metadata.sorted_tables:
            for column in table.columns:
                for needle in ("zelda.unique", "Zelda Quintessence", "Quintessence"):
                    found = db.session.scalar(select(table.c[column.name]).where(
                        cast(table.c[column.name], String).contains(needle)).limit(1))
                    if found is not None:
                        leftovers.append((table.name, column.name))
        assert leftovers == []
        assert db.session.get(User, user.id) is not None  # the id stays, for the audit trail
        assert inspect(db.engine).has_table("users")
    again = client.post("/api/v2/auth/signup", json={"email": "zelda.unique@example.com",
                                                     "password": "a brand new passphrase"})
    assert again.status_code == 201


def test_the_export_holds_the_account_and_no_secret(app, client, user, login):
    tokens = login(user)
    answer = client.get("/api/v2/auth/account/export", headers=bearer(tokens))
    assert answer.status_code == 200
    data = answer.get_json()
    assert set(data) == {"profile", "providers", "sessions", "second_factors", "passkeys",
                         "consents", "audit_events"}
    assert data["profile"]["email"] == user.email and len(data["sessions"]) == 1
    assert any(e["event"] == "login_succeeded" for e in data["audit_events"])
    with app.app_context():
        stored = db.session.get(User, user.id)
        assert stored.password_hash not in answer.text
    assert tokens["refresh_token"] not in answer.text and "argon2" not in answer.text


def test_erasure_takes_only_the_persons_own_mail(app, make_user):
    """An address holding `_` or `%` is matched as itself, not as a pattern."""
    from app.domain.lifecycle import leaving
    from app.domain.mail.outbox import schedule
    from app.models import MailJob
    leaving_user = make_user("a_b@example.com")
    other = make_user("axb@example.com")
    with app.app_context():
        for address in (leaving_user.email, other.email):
            schedule(MailJob.PASSWORD_CHANGED, {"to": address})
        db.session.commit()
        leaving.erase(leaving_user.id)
        left = [job.payload["to"] for job in db.session.scalars(select(MailJob))
                if job.kind == MailJob.PASSWORD_CHANGED]
    assert left == ["axb@example.com"]
