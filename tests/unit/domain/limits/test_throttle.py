"""The limits that protect accounts (app/domain/limits/throttle.py), through the API: counted in the
database, shared by instances and kept over restarts; delays that grow per email and address;
a per-email limit that does not keep the owner out of an address she signed in from before;
the same for known and unknown emails; IPv6 counted by its /64."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import select

from app.domain.limits.throttle import network_key
from app.extensions import db
from app.infra.hashing import Hasher
from app.models import AuditEvent, FailureCounter
from tests.support import races
from tests.support.apps import build_app, dispose_app
from tests.support.settings import change_settings

ROOT = Path(__file__).resolve().parents[4]
LOGIN = "/api/v2/auth/login"

# flask-limiter's own limits out of the way: what is under test is the database's.
LIMITS = {"RATELIMIT_ENABLED": True, "LIMIT_LOGIN": "1000 per minute",
          "LIMIT_LOGIN_IP": "1000 per minute", "LIMIT_LOGIN_FAILURES": "4 per day",
          "LOGIN_DELAY_AFTER": 3, "LOGIN_DELAY_MAX": 8}


@pytest.fixture
def settings():
    return dict(LIMITS)


def attempt(client, email, password="wrong password", ip="203.0.113.1"):
    return client.post(LOGIN, json={"email": email, "password": password},
                       environ_base={"REMOTE_ADDR": ip})


def strangers_fail(client, email, count, first=10):
    """`count` wrong passwords for `email`, each from an address of its own."""
    for i in range(first, first + count):
        assert attempt(client, email, ip=f"203.0.113.{i}").status_code == 401


# Workers, instances and restarts ----------------------------------------------------------------

OTHER_INSTANCE = """
import json, sys
from app import create_app
app = create_app(json.loads(sys.argv[1]))
client = app.test_client()
for ip in sys.argv[3:]:
    print(client.post("/api/v2/auth/login", json={"email": sys.argv[2], "password": "wrong"},
                      environ_base={"REMOTE_ADDR": ip}).status_code)
"""


def test_another_instance_on_the_same_database_counts_the_same_failures(
        client, user, database_url, tmp_path):
    """A second process (another gunicorn worker, another instance) fails twice on the account;
    two more failures here reach the limit of four."""
    config = {"INSTANCE_PATH": str(tmp_path / "other"), "SQLALCHEMY_DATABASE_URI": database_url,
              "MAIL_URL": "memory://", "SECRET_KEY": "test", "ARGON2_MEMORY_COST": 64,
              "ARGON2_TIME_COST": 1, "ARGON2_PARALLELISM": 1, **LIMITS}
    other = subprocess.run([sys.executable, "-c", OTHER_INSTANCE, json.dumps(config), user.email,
                            "198.51.100.1", "198.51.100.2"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert other.stdout.split() == ["401", "401"], other.stderr
    strangers_fail(client, user.email, 2)
    assert attempt(client, user.email, user.password, ip="192.0.2.1").status_code == 429


def test_the_counters_survive_a_restart(app, client, user, clock, settings, database_url,
                                        tmp_path):
    strangers_fail(client, user.email, 4)
    restarted = build_app(tmp_path / "restarted", clock, settings, database_url)
    try:
        response = attempt(restarted.test_client(), user.email, user.password, ip="192.0.2.1")
        assert response.status_code == 429
    finally:
        dispose_app(restarted)


class TestConcurrentFailures:
    @pytest.fixture
    def settings(self):
        return {**LIMITS, "LIMIT_LOGIN_FAILURES": "100 per day"}

    def test_concurrent_failures_are_all_counted(self, app, user):
        def fail(i):
            return attempt(app.test_client(), user.email, ip=f"203.0.113.{i}").status_code

        with ThreadPoolExecutor(max_workers=8) as pool:
            assert list(pool.map(fail, range(16))) == [401] * 16
        with app.app_context():
            overall = db.session.scalars(select(FailureCounter.failures)
                                         .where(FailureCounter.source == "*")).one()
        assert overall == 16


class TestBursts:
    """16 wrong passwords at once (tests/support/races.py): exactly the limit are hashed."""

    @pytest.fixture
    def settings(self):
        return {**LIMITS, **races.POOL, "LIMIT_LOGIN_FAILURES": "100 per day",
                "LOGIN_DELAY_AFTER": 5}

    def test_from_one_address_five_are_tried_then_the_delay(self, app, user, monkeypatch):
        with races.burst(monkeypatch, Hasher, "verify") as burst:
            answers = burst.send(lambda _: attempt(app.test_client(), user.email))
        assert burst.checked == 5
        assert races.statuses(answers) == [401] * 5 + [429] * 11

    def test_from_many_addresses_the_per_email_limit_holds(self, app, user, settings,
                                                           monkeypatch):
        change_settings(app, LIMIT_LOGIN_FAILURES="4 per day")
        with races.burst(monkeypatch, Hasher, "verify") as burst:
            answers = burst.send(lambda i: attempt(app.test_client(), user.email,
                                                   ip=f"203.0.113.{i + 10}"))
        assert burst.checked == 4
        assert races.statuses(answers) == [401] * 4 + [429] * 12


# The owner and the strangers ----------------------------------------------------------------

def test_strangers_do_not_keep_the_owner_out_of_an_address_she_signed_in_from(client, user):
    """The API has no cookie: an address (its /64 for IPv6) with a session of the account is a
    device that signed in before."""
    assert attempt(client, user.email, user.password, ip="198.51.100.7").status_code == 200
    assert attempt(client, user.email, user.password, ip="2001:db8:5:6::1").status_code == 200
    strangers_fail(client, user.email, 4)

    assert attempt(client, user.email, user.password, ip="192.0.2.50").status_code == 429
    assert attempt(client, user.email, user.password, ip="2001:db8:5:7::1").status_code == 429
    assert attempt(client, user.email, user.password, ip="198.51.100.7").status_code == 200
    assert attempt(client, user.email, user.password, ip="2001:db8:5:6::beef").status_code == 200


def test_a_known_address_is_still_limited_when_its_passwords_are_wrong(client, user):
    assert attempt(client, user.email, user.password, ip="198.51.100.7").status_code == 200
    strangers_fail(client, user.email, 4)
    statuses = [attempt(client, user.email, ip="198.51.100.7").status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]  # its own delays begin after LOGIN_DELAY_AFTER


def test_the_refusals_come_before_any_password_hashing(client, user, monkeypatch):
    strangers_fail(client, user.email, 4)
    hashed = []
    verify = Hasher.verify
    monkeypatch.setattr(Hasher, "verify", lambda self, *a: hashed.append(1) or verify(self, *a))
    assert attempt(client, user.email, user.password, ip="192.0.2.9").status_code == 429
    assert hashed == []


# Delays ------------------------------------------------------------------------------------

class TestDelays:
    @pytest.fixture
    def settings(self):
        return {**LIMITS, "LIMIT_LOGIN_FAILURES": "100 per day"}

    def test_delays_double_per_email_and_address_and_retry_after_says_so(self, client, user,
                                                                         clock):
        assert [attempt(client, user.email).status_code for _ in range(3)] == [401] * 3
        waits = []
        for _ in range(5):
            refused = attempt(client, user.email, user.password)  # even the right password
            assert refused.status_code == 429
            assert refused.get_json()["retry_after"] == int(refused.headers["Retry-After"])
            waits.append(int(refused.headers["Retry-After"]))
            clock.advance(waits[-1])
            assert attempt(client, user.email).status_code == 401
        assert waits == [1, 2, 4, 8, 8]  # doubled each time, up to LOGIN_DELAY_MAX
        assert attempt(client, user.email, ip="203.0.113.2").status_code == 401  # another address

    def test_a_successful_sign_in_clears_its_email_and_address(self, client, user, clock):
        for _ in range(3):
            attempt(client, user.email)
        clock.advance(1)
        assert attempt(client, user.email, user.password).status_code == 200
        assert [attempt(client, user.email).status_code for _ in range(4)] == [401] * 3 + [429]

    def test_an_ipv6_client_is_counted_by_its_64(self, client, user):
        statuses = [attempt(client, user.email, ip=f"2001:db8:1:2::{i}").status_code
                    for i in range(1, 5)]
        assert statuses == [401, 401, 401, 429]
        assert attempt(client, user.email, ip="2001:db8:1:3::1").status_code == 401


def test_unknown_and_known_emails_are_throttled_identically(client, user, clock):
    """The same keys and the same answers: the limits tell no one which emails have accounts."""
    def journey(email):
        seen = []
        for step in range(10):
            response = attempt(client, email, ip="203.0.113.1" if step % 3 else "203.0.113.2")
            body = response.get_json()
            seen.append((response.status_code, response.headers.get("Retry-After"),
                         body["code"], body.get("retry_after")))
            clock.advance(1)
        return seen

    known, unknown = journey(user.email), journey("nobody@example.com")
    assert known == unknown
    assert {status for status, *_ in known} == {401, 429}


# Keys ----------------------------------------------------------------------------------------

def test_network_keys():
    assert network_key("2001:db8:1:2:aaaa:bbbb:cccc:dddd") == "2001:db8:1:2::/64"
    assert network_key("::ffff:192.0.2.1") == "192.0.2.1"
    assert network_key("192.0.2.1") == "192.0.2.1"
    assert network_key("fe80::1%eth0") == "fe80::/64"
    assert network_key("unknown") == "unknown"


class TestAddressLimits:
    @pytest.fixture
    def settings(self):
        return {"RATELIMIT_ENABLED": True, "LIMIT_LOGIN_IP": "3 per minute",
                "LIMIT_FORGOT": "2 per hour"}

    def test_ipv6_clients_share_the_limits_of_their_64(self, app, client):
        statuses = [attempt(client, f"user{i}@example.com", ip=f"2001:db8:1:2::{i}").status_code
                    for i in range(1, 5)]
        assert statuses == [401, 401, 401, 429]
        assert attempt(client, "user9@example.com", ip="2001:db8:1:3::1").status_code == 401
        with app.app_context():  # the audit trail keeps the whole address
            addresses = set(db.session.scalars(select(AuditEvent.ip)))
        assert "2001:db8:1:2::1" in addresses and "2001:db8:1:2::/64" not in addresses

    def test_bodies_without_an_email_use_up_only_their_own_address(self, client):
        def forgot(ip):
            return client.post("/api/v2/auth/forgot-password", json={},
                               environ_base={"REMOTE_ADDR": ip}).status_code

        assert [forgot("203.0.113.1") for _ in range(3)] == [422, 422, 429]
        assert forgot("198.51.100.1") == 422
