"""Times on the hosted pages (app/pages/times.py): said in UTC, saying "UTC", inside a <time>
element whose datetime our own script (static/local-times.js) says again in the browser's zone;
without script the UTC time is what the person reads. (In Chromium, in a zone:
tests/browser/test_local_times.py.)"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from app.extensions import db
from app.models import AuthSession
from app.web.headers import CONTENT_SECURITY_POLICY
from tests.support.pages import submit

LOCAL_TIMES = '<script src="/static/local-times.js" defer></script>'
TIME = re.compile(r'<time datetime="([^"]+)" data-local="([a-z-]+)">([^<]*)</time>')


def _signed_in_at(app, client, user, at: datetime):
    submit(client, "/login", {"email": user.email, "password": user.password})
    with app.app_context():
        for session in db.session.scalars(db.select(AuthSession)):
            session.last_used_at = at
        db.session.commit()


def _an_hour_before(clock) -> datetime:
    return (clock.now - timedelta(hours=1)).replace(second=30)


def test_a_devices_time_is_utc_and_says_so_without_script(app, client, user, clock):
    at = _an_hour_before(clock)
    _signed_in_at(app, client, user, at)
    page = client.get("/account", headers={"Accept-Language": "en"})
    said = (f"{at:%b} {at.day}, {at.year}, {at.hour % 12 or 12}:{at:%M:%S}\u202f"
            f"{'AM' if at.hour < 12 else 'PM'} UTC")
    assert (f"{at:%Y-%m-%dT%H:%M:%S}Z", "datetime", said) in TIME.findall(page.text)
    assert "last used <time" in page.text


def test_in_german_too_and_the_day_follows_the_language(app, client, user, clock):
    at = _an_hour_before(clock)
    _signed_in_at(app, client, user, at)
    page = client.get("/account", headers={"Accept-Language": "de"})
    assert (f"{at:%Y-%m-%dT%H:%M:%S}Z", "datetime", f"{at:%d.%m.%Y, %H:%M:%S} UTC") in \
        TIME.findall(page.text)


def test_the_script_is_our_own_file_once_and_the_policy_lets_only_it_run(client, user):
    submit(client, "/login", {"email": user.email, "password": user.password})
    page = client.get("/account")
    assert page.text.count(LOCAL_TIMES) == 1
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page.text)  # never inline
    assert page.headers["Content-Security-Policy"] == \
        f"{CONTENT_SECURITY_POLICY}; script-src 'self'"
    served = client.get("/static/local-times.js")
    assert served.status_code == 200 and "Intl.DateTimeFormat" in served.text


def test_a_page_without_a_time_loads_no_time_script(client):
    assert "local-times.js" not in client.get("/login").text
