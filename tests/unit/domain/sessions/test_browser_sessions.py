"""'Keep me signed in' (issue 25): unticked, the browser's cookie ends with the browser and the
session within hours; ticked, today's 30 days."""

from __future__ import annotations

import pytest

from app.extensions import db
from app.models import AuthSession
from tests.support.pages import submit

pytestmark = pytest.mark.app_settings("pages")


def _session_cookie(response):
    return next(c for c in response.headers.getlist("Set-Cookie") if "svc_session=" in c)


def _held_session(app, client):
    with client.session_transaction() as held:
        session_id = held["_user_id"]
    with app.app_context():
        return db.session.get(AuthSession, session_id)


def test_unticked_the_cookie_ends_with_the_browser_and_the_session_within_hours(app, client,
                                                                               user):
    answer = submit(client, "/login", {"email": user.email, "password": user.password})
    cookie = _session_cookie(answer)
    assert "Expires=" not in cookie and "Max-Age=" not in cookie
    held = _held_session(app, client)
    assert (held.expires_at - held.created_at).total_seconds() <= 12 * 3600


def test_ticked_it_keeps_the_thirty_days(app, client, user):
    answer = submit(client, "/login", {"email": user.email, "password": user.password,
                                       "keep": "y"})
    assert "Expires=" in _session_cookie(answer)
    held = _held_session(app, client)
    assert (held.expires_at - held.created_at).days >= 29


def test_the_box_is_on_the_form_and_unticked(client):
    page = client.get("/login").text
    assert 'name="keep"' in page and "Keep me signed in" in page
    assert 'name="keep" type="checkbox" value="y" checked' not in page
