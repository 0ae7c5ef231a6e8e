"""Account events (issue 24) are written with the change they report: a committed change has its
event, a refused one none."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.domain.admin import actions, directory
from app.domain.audit import ClientInfo
from app.domain.errors import InvalidBody
from app.extensions import db
from app.models import AccountEvent

CLI = ClientInfo(actor="cli")


def _events(app, user_id):
    with app.app_context():
        return [(e.type, e.data) for e in db.session.scalars(
            select(AccountEvent).where(AccountEvent.user_id == user_id)
            .order_by(AccountEvent.occurred_at))]


def test_each_change_emits_its_event(app, client, user, login):
    login(user)
    with app.app_context():
        account = directory.require_user(user.id)
        actions.update(account, CLI, plan="pro")
        actions.disable(account, CLI)
        actions.enable(account, CLI)
    kinds = [kind for kind, _ in _events(app, user.id)]
    assert kinds == ["user.created", "user.updated", "user.disabled", "sessions.ended",
                     "user.enabled"]
    assert _events(app, user.id)[1][1] == {"changed": ["plan"], "plan": "pro"}


def test_a_refused_change_emits_nothing(app, user):
    with app.app_context(), pytest.raises(InvalidBody):
        actions.update(directory.require_user(user.id), CLI, plan="Not A Plan")
    assert [kind for kind, _ in _events(app, user.id)] == ["user.created"]


def test_logout_everywhere_names_the_sessions_it_ended(app, client, user, login):
    first, second = login(user), login(user)
    client.post("/api/v2/auth/logout?scope=global",
                headers={"Authorization": f"Bearer {first['access_token']}"})
    ended = [data for kind, data in _events(app, user.id) if kind == "sessions.ended"]
    assert len(ended) == 1 and ended[0]["reason"] == "logout"
    assert len(ended[0]["session_ids"]) == 2
    assert second  # both sessions were live before
