"""Each worker answers "is this session live" from its own copy of what every instance publishes
(app/infra/session_feed.py), with no Redis read per call, and still refuses at once a session
logged out on another instance; a worker cut off from Redis stops trusting its copy within the
lease (LEASE_SECONDS).

Real gunicorn instances of one worker each (the requests of a test all reach the same worker) on a
PostgreSQL database and a Redis of the module's own, which one test hangs.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest

from app.infra.session_feed import LEASE_SECONDS
from tests.support.api import assert_problem, login, new_email, post, signup, verify
from tests.support.deployment import Instance, InstanceFactory, cli, shared_settings
from tests.support.http import bearer

if TYPE_CHECKING:
    from tests.support.redis import RedisServer

pytestmark = pytest.mark.e2e

# Long, so that every check below falls inside a fresh cached answer however slow the machine:
# what refuses a revoked session must be the copy, not the cache's expiry.
CACHE = {"SVC_SESSION_CACHE_SECONDS": "60"}


@pytest.fixture
def settings(own_redis: RedisServer, migrated_postgres_url: str) -> dict[str, str]:
    own_redis.flush()
    return {**shared_settings(migrated_postgres_url, own_redis.url), **CACHE}


def redis_reads(server: RedisServer) -> int:
    """MGET calls Redis has answered: the per-call check a worker makes without its copy."""
    with server.client() as client:
        return int(client.info("commandstats").get("cmdstat_mget", {}).get("calls", 0))


def keep_current(instance: Instance, token: str, times: int = 3) -> None:
    """A few calls in a row: the worker reads its subscription and renews its lease."""
    for _ in range(times):
        assert verify(instance, token).status_code == 200


def test_a_busy_worker_reads_redis_for_no_call(
        own_redis: RedisServer, settings: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    instance = instance_factory(settings, workers=1, name="feed-reads")
    token = signup(instance, new_email("feed"))["access_token"]
    keep_current(instance, token)  # subscribed, cached
    before = redis_reads(own_redis)
    answered = 0
    started = time.monotonic()
    while time.monotonic() - started < 1.0:
        assert verify(instance, token).status_code == 200
        answered += 1
    # A busy worker renews its lease (a PING on its subscription) before it runs out; a loaded
    # machine may stall it past the lease now and then, and each stall costs one read.
    assert redis_reads(own_redis) - before < answered / 4, (answered, redis_reads(own_redis))
    assert "redis unavailable" not in instance.log()  # not by leaving a failing Redis alone


def test_a_logout_on_a_is_refused_at_once_by_b_answering_from_its_copy(
        settings: dict[str, str], instance_factory: InstanceFactory) -> None:
    a = instance_factory(settings, workers=1, name="feed-a")
    b = instance_factory(settings, workers=1, name="feed-b")
    email = new_email("feedout")
    signup(a, email)
    for _ in range(15):
        token = login(a, email).json()["access_token"]
        keep_current(b, token)  # cached on B, its copy current
        out = post(a, "/api/v2/auth/logout", headers=bearer(token))
        assert out.status_code == 204, out.text
        assert_problem(verify(b, token), 401, "session_revoked")


def test_an_account_disabled_on_a_is_refused_at_once_by_b(
        settings: dict[str, str], instance_factory: InstanceFactory, workdir: Path) -> None:
    a = instance_factory(settings, workers=1, name="feed-disable-a")
    b = instance_factory(settings, workers=1, name="feed-disable-b")
    email = new_email("feeddisable")
    token = signup(a, email)["access_token"]
    keep_current(b, token)
    disabled = cli(workdir, settings, "users", "disable", email)
    assert disabled.returncode == 0, disabled.stderr
    assert_problem(verify(b, token), 401, "session_revoked")


def test_a_worker_that_stops_hearing_from_redis_stops_trusting_its_copy_within_the_lease(
        own_redis: RedisServer, settings: dict[str, str], migrated_postgres_url: str,
        instance_factory: InstanceFactory) -> None:
    """The bound: Redis hangs, and a revocation reaches the database but never Redis (as if its
    instance died before publishing). Once the lease has run out, the worker asks again, finds
    Redis failing and answers from the database."""
    instance = instance_factory(settings, workers=1, name="feed-lease")
    tokens = signup(instance, new_email("feedlease"))
    keep_current(instance, tokens["access_token"])
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        with psycopg.connect(migrated_postgres_url.replace("postgresql+psycopg", "postgresql"),
                             autocommit=True, connect_timeout=5) as connection:
            connection.execute("UPDATE sessions SET revoked_at = now(), revoke_reason = 'test'")
        time.sleep(LEASE_SECONDS + 0.05)
        assert_problem(verify(instance, tokens["access_token"]), 401, "session_revoked")
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)
