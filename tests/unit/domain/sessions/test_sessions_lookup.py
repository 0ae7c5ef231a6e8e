"""verify's look-up of a session on a cache miss (app/infra/live_sessions.py) reads the session by
its key alone (issue 34: it read every session of the account on PostgreSQL's generic plan) and
then compares its account: a session is live for its own account only. On SQLite and PostgreSQL;
the plan is tests/test_scale_plans.py's."""

from __future__ import annotations

from app.domain.services import services
from app.extensions import db
from app.models import AuthSession


def test_a_session_is_live_for_its_own_account_only(app, clock, make_user, login):
    ada, bob = make_user("ada@example.com"), make_user("bob@example.com")
    login(ada)
    with app.app_context():
        session_id = db.session.query(AuthSession.id).filter_by(user_id=ada.id).scalar()
        live = services().live_sessions
        for _ in range(7):  # past the 5 runs after which psycopg prepares the statement
            assert live.live_account(session_id, bob.id, clock()) is None
            assert live.live_account(session_id, "", clock()) is None
        found = live.live_account(session_id, ada.id, clock())
        assert found is not None and found.id == ada.id and found.email == "ada@example.com"
        assert live.live_account("no-such-session", ada.id, clock()) is None
