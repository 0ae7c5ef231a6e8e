"""An account's audit events, newest first (issue 33, finding 21): of calls that overlap, the one
that took the later time may write its row first; the admin API's list and the console's page
still show the later one first, and paging neither repeats nor skips one."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from tests.support import admin
from tests.support.admin import authorized
from tests.support.api import all_at_once
from tests.unit.console.test_views import operator  # noqa: F401 (a fixture)

ADMIN = "/api/admin/v1"


@pytest.fixture
def settings():
    return {"PLANS": "free,pro,team", "DEFAULT_PLAN": "free"}


@pytest.fixture
def support(app, client):
    return admin.token(client, admin.register(app, "support", "users:write", "users:plan",
                                              "audit:read"))


def later_call_written_first(client, clock, user, support):
    """Two changes: the one whose time is 38 ms later is written first (a smaller id)."""
    start = clock.now
    clock.now = start + timedelta(milliseconds=38)
    assert client.patch(f"{ADMIN}/users/{user.id}", json={"plan": "pro"},
                        **authorized(support)).status_code == 200
    clock.now = start
    assert client.patch(f"{ADMIN}/users/{user.id}", json={"full_name": "Ada L."},
                        **authorized(support)).status_code == 200
    clock.now = start + timedelta(seconds=1)


def listed(client, user, support, limit=100):
    found, cursor = [], None
    while True:
        page = client.get(f"{ADMIN}/users/{user.id}/events", query_string={
            "limit": limit, **({"cursor": cursor} if cursor else {})}, **authorized(support))
        assert page.status_code == 200, page.get_json()
        found += page.get_json()["events"]
        cursor = page.get_json()["next_cursor"]
        if cursor is None:
            return found


def newest_first(times):
    return all(a >= b for a, b in zip(times, times[1:], strict=False))


def test_the_admin_api_lists_the_later_change_first(client, clock, user, support):
    later_call_written_first(client, clock, user, support)
    events = listed(client, user, support)
    kinds = [event["event"] for event in events]
    assert kinds.index("plan_changed") < kinds.index("profile_changed")
    assert newest_first([datetime.fromisoformat(event["at"]) for event in events])


def test_pages_of_one_at_a_time_neither_repeat_nor_skip(client, clock, user, support):
    later_call_written_first(client, clock, user, support)
    whole = listed(client, user, support)
    ids = [event["id"] for event in whole]
    paged = [event["id"] for event in listed(client, user, support, limit=1)]
    # Each listing is audited too: those newer than `whole` are not compared.
    assert [found for found in paged if found in ids] == ids
    assert len(paged) == len(set(paged))


def test_the_console_shows_the_later_change_first(client, clock, user, support, operator):  # noqa: F811
    later_call_written_first(client, clock, user, support)
    browser, _account, _secret = operator
    page = browser.get(f"/admin/users/{user.id}")
    assert page.status_code == 200
    shown = re.findall(r'<time datetime="([^"]+)">[^<]*</time>\s*(\w+)', page.text)
    kinds = [kind for _, kind in shown]
    assert kinds.index("plan_changed") < kinds.index("profile_changed")
    assert newest_first([datetime.fromisoformat(at) for at, _ in shown])


def test_sixteen_concurrent_calls_are_listed_newest_first(app, client, user, support):
    def call(index):
        return app.test_client().patch(f"{ADMIN}/users/{user.id}",
                                       json={"plan": ("free", "pro", "team")[index % 3],
                                             "full_name": f"Ada {index}"}, **authorized(support))
    assert {answer.status_code for answer in all_at_once(16, call)} == {200}
    events = listed(client, user, support, limit=7)
    assert newest_first([datetime.fromisoformat(event["at"]) for event in events])
