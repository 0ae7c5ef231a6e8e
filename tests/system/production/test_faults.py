"""Faults in production: the database, Redis or the mail server goes away, a worker is killed.

Each test runs a real gunicorn instance on dependencies of its own (a PostgreSQL or Redis server
started for it, or a port nothing listens on), so it can take them down without disturbing the
other tests.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
import pytest
import requests

from tests.support.accounts import PASSWORD
from tests.support.api import (
    assert_problem,
    get,
    login,
    mailed_links,
    new_email,
    post,
    refresh,
    signup,
    verify,
)
from tests.support.deployment import (
    NEW_PASSWORD,
    Instance,
    InstanceFactory,
    migrate,
    restart_postgres,
    shared_settings,
)
from tests.support.http import TIMEOUT, wait_until
from tests.support.servers import free_port

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer
    from tests.support.redis import RedisServer

pytestmark = pytest.mark.e2e

RECOVERY_SECONDS = 10.0  # "within a few seconds" of a dependency coming back
QUICK_SECONDS = 1.0  # an answer that does not wait for a dependency that is down
REDIS_REST_SECONDS = 5  # how long the app leaves a failing Redis alone


# Hosted pages --------------------------------------------------------------------------------

def hosted_login(instance: Instance, email: str, password: str = PASSWORD) -> requests.Response:
    """Sign in through the hosted page as a browser does: GET the form, POST it back with its
    CSRF token (the GET needs no database)."""
    with requests.Session() as browser:
        form = browser.get(instance.url("/login"), timeout=TIMEOUT)
        assert form.status_code == 200, form.text
        found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', form.text)
        assert found, "no CSRF token in the login form"
        return browser.post(instance.url("/login"), allow_redirects=False, timeout=TIMEOUT,
                            data={"csrf_token": found.group(1), "email": email,
                                  "password": password})


# (a) The database goes away and comes back ----------------------------------------------------

def test_database_down_503_then_resumes_without_restart(
        own_postgres: PostgresServer, instance_factory: InstanceFactory,
        workdir: Path) -> None:
    database_url = own_postgres.create_database("svc")
    migrate(workdir, database_url)
    instance = instance_factory(shared_settings(database_url), name="db-fault")
    email = new_email("dbdown")
    tokens = signup(instance, email)
    assert login(instance, email).status_code == 200
    assert hosted_login(instance, email).status_code == 302  # signed in, sent on
    assert get(instance, "/health").status_code == 200
    workers = instance.worker_pids()

    own_postgres.stop()
    try:
        for _ in range(3):  # every worker, whatever connections it had pooled
            assert_problem(login(instance, email), 503, "service_unavailable")
        assert_problem(verify(instance, tokens["access_token"]), 503, "service_unavailable")
        assert_problem(refresh(instance, tokens["refresh_token"]), 503, "service_unavailable")
        page = hosted_login(instance, email)
        assert page.status_code == 503, page.text
        assert page.headers["Content-Type"].startswith("text/html")
        assert "unavailable" in page.text and "Traceback" not in page.text
        assert page.headers.get("Retry-After")
        health = get(instance, "/health")
        assert health.status_code == 503, health.text
        assert health.headers["Content-Type"] == "application/problem+json"
    finally:
        restart_postgres(own_postgres)
    came_back = time.monotonic()

    wait_until(lambda: login(instance, email).status_code == 200, RECOVERY_SECONDS,
               "login works again")
    for _ in range(3):
        assert login(instance, email).status_code == 200
    assert hosted_login(instance, email).status_code == 302
    assert get(instance, "/health").status_code == 200
    again = refresh(instance, tokens["refresh_token"])
    assert again.status_code == 200, again.text
    assert verify(instance, again.json()["access_token"]).status_code == 200
    assert time.monotonic() - came_back < RECOVERY_SECONDS
    # Resumed by itself: the same master and the same workers.
    assert instance.process.poll() is None
    assert instance.worker_pids() == workers


# Redis of the module's own -------------------------------------------------------------------

@pytest.fixture
def redis_deployment(own_redis: RedisServer,
                     migrated_postgres_url: str) -> Iterator[dict[str, str]]:
    """Settings for instances on a fresh, migrated database and the module's Redis, which is
    running when the test starts and again when it ends."""
    own_redis.start()
    own_redis.flush()
    try:
        yield shared_settings(migrated_postgres_url, own_redis.url)
    finally:
        own_redis.start()


def timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    started = time.monotonic()
    response = call(*args, **kwargs)
    return response, time.monotonic() - started


# (b) Redis down, failing open ----------------------------------------------------------------

def test_redis_down_falls_back_to_the_database_and_keeps_serving(
        own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    instance = instance_factory({
        **redis_deployment, "SVC_RATELIMIT_ENABLED": "true", "SVC_LIMIT_LOGIN": "4 per minute",
    }, workers=1, name="redis-open")
    email = new_email("redisdown")
    tokens = signup(instance, email)
    assert verify(instance, tokens["access_token"]).status_code == 200
    assert login(instance, email).status_code == 200
    with own_redis.client() as client:  # the counters really are in Redis
        keys = list(client.scan_iter(match="*svc-auth*"))
    assert any(b"login" in key for key in keys) and any(b"signup" in key for key in keys), keys

    own_redis.stop()
    try:
        timings: dict[str, float] = {}
        logged_in, timings["login"] = timed(login, instance, email)
        assert logged_in.status_code == 200, logged_in.text
        fresh, timings["signup"] = timed(signup, instance, new_email("redisdown-new"))
        checked, timings["verify"] = timed(verify, instance, fresh["access_token"])
        assert checked.status_code == 200, checked.text
        rotated, timings["refresh"] = timed(refresh, instance, logged_in.json()["refresh_token"])
        assert rotated.status_code == 200, rotated.text
        assert verify(instance, rotated.json()["access_token"]).status_code == 200
        assert hosted_login(instance, email).status_code == 302  # the hosted page too
        logout = post(instance, "/api/v2/auth/logout",
                      headers={"Authorization": f"Bearer {tokens['access_token']}"})
        # Committed, but Redis did not take it: no success (another instance may still hear
        # Redis and answer from its copy). The revocation is in the database: refused here.
        assert_problem(logout, 503, "service_unavailable")
        assert_problem(verify(instance, tokens["access_token"]), 401, "session_revoked")

        # Rate limiting goes on, in the database: 4 logins per minute per email.
        limited = new_email("redisdown-limit")
        signup(instance, limited)
        statuses = [login(instance, limited, "not the password").status_code for _ in range(5)]
        assert statuses == [401, 401, 401, 401, 429], statuses

        log = instance.log()
        assert "rate limits counted in the database" in log, log[-3000:]
        assert re.search(r"redis unavailable", log, re.IGNORECASE), log[-3000:]
        slow = {name: round(seconds, 2) for name, seconds in timings.items() if seconds > 1.0}
        assert not slow, f"requests slowed down by the Redis outage (seconds): {slow}"
    finally:
        own_redis.start()

    # Redis is back: everything still works.
    again = login(instance, new_email("never-signed-up"))
    assert_problem(again, 401, "invalid_credentials")
    assert login(instance, email).status_code == 200
    assert verify(instance, rotated.json()["access_token"]).status_code == 200


def test_redis_hung_requests_stay_quick(
        own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    """Redis accepts connections but never answers (SIGSTOP: a stalled or partitioned Redis,
    the harder case than one that refuses). Failing open must stay fast, not just correct."""
    instance = instance_factory({**redis_deployment, "SVC_RATELIMIT_ENABLED": "true"},
                                workers=1, name="redis-hung")
    email = new_email("hung")
    tokens = signup(instance, email)
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        # The first verify pays one Redis timeout (0.5 s) before it falls back; the next none.
        for bound in (2.0, QUICK_SECONDS):
            checked, seconds = timed(verify, instance, tokens["access_token"])
            assert checked.status_code == 200, checked.text
            assert seconds < bound, f"verify took {seconds:.2f} s"
        # The first login finds Redis gone (a timeout or two); the next ones do not wait.
        for attempt, bound in enumerate((2.0, QUICK_SECONDS, QUICK_SECONDS)):
            try:  # a short timeout: the bug costs 5-10 s a login
                logged_in, seconds = timed(post, instance, "/api/v2/auth/login",
                                           {"email": email, "password": PASSWORD}, timeout=3)
            except requests.Timeout:
                pytest.fail(f"login {attempt + 1} did not answer within 3 s")
            assert logged_in.status_code == 200, logged_in.text
            assert seconds < bound, f"login {attempt + 1} took {seconds:.2f} s"
        fresh, seconds = timed(signup, instance, new_email("hung-new"))
        assert seconds < QUICK_SECONDS, f"signup took {seconds:.2f} s"
        rotated, seconds = timed(refresh, instance, fresh["refresh_token"])
        assert rotated.status_code == 200, rotated.text
        assert seconds < QUICK_SECONDS, f"refresh took {seconds:.2f} s"
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)


# (c) Redis down, failing closed --------------------------------------------------------------

def test_redis_down_fail_closed_refuses_limited_endpoints_only(
        own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    instance = instance_factory({
        **redis_deployment, "SVC_RATELIMIT_ENABLED": "true",
        "SVC_RATELIMIT_FAIL_CLOSED": "true",
    }, name="redis-closed")
    email = new_email("closed")
    tokens = signup(instance, email)
    assert login(instance, email).status_code == 200

    own_redis.stop()
    try:
        for _ in range(3):
            refused = login(instance, email)
            assert_problem(refused, 503, "service_unavailable")
            assert refused.headers.get("Retry-After")
        assert_problem(post(instance, "/api/v2/auth/signup",
                            {"email": new_email("closed-new"), "password": PASSWORD}),
                       503, "service_unavailable")
        assert_problem(refresh(instance, tokens["refresh_token"]), 503, "service_unavailable")
        page = hosted_login(instance, email)  # the hosted page: a friendly 503 page
        assert page.status_code == 503, page.text
        assert page.headers["Content-Type"].startswith("text/html")
        # No limit on verify: it keeps working (the revocations come from the database).
        for _ in range(3):
            checked, seconds = timed(verify, instance, tokens["access_token"])
            assert checked.status_code == 200, checked.text
        assert seconds < QUICK_SECONDS, f"verify took {seconds:.2f} s with Redis down"
        assert get(instance, "/.well-known/jwks.json").status_code == 200
    finally:
        own_redis.start()

    wait_until(lambda: login(instance, email).status_code == 200, RECOVERY_SECONDS,
               "login works again once Redis is back")
    assert "Traceback" not in instance.log()


# (c2) Redis failing: a 429 stays a 429, logouts stay quick, revocations are not lost, limits hold

def test_a_429_stays_a_429_when_redis_fails_as_it_answers(
        own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    """Redis counts the request over the limit, then fails when asked when the window ends (its
    TTL command refused, by an ACL): the 429 gives the limit's whole period, never a 500; and
    a Redis hung or stopped in the middle of a burst gives 429s, 401s or 503s, never a 500."""
    for fail_closed in ("false", "true"):
        instance = instance_factory({
            **redis_deployment, "SVC_RATELIMIT_ENABLED": "true",
            "SVC_RATELIMIT_FAIL_CLOSED": fail_closed, "SVC_LIMIT_LOGIN": "2 per minute",
        }, workers=1, name=f"redis-429-{fail_closed}")
        for surface in ("api", "page"):
            email = new_email("limit429")

            def attempt(email: str = email, surface: str = surface,
                        instance: Instance = instance) -> requests.Response:
                if surface == "api":
                    return login(instance, email, "wrong password entirely")
                return hosted_login(instance, email, "wrong password entirely")

            assert [attempt().status_code for _ in range(2)] == [401, 401]
            with own_redis.client() as client:
                client.execute_command("ACL", "SETUSER", "default", "-ttl")
            try:
                refused = attempt()
            finally:
                with own_redis.client() as client:
                    client.execute_command("ACL", "SETUSER", "default", "+@all")
            assert refused.status_code == 429, refused.text
            assert refused.headers["Retry-After"] == "60"  # the limit's whole minute
            if surface == "api":
                assert assert_problem(refused, 429, "rate_limited")["retry_after"] == 60
            else:
                assert refused.headers["Content-Type"].startswith("text/html")
            if fail_closed == "false":  # failing open, the limits counted in the database
                time.sleep(REDIS_REST_SECONDS)  # until the worker asks Redis again

        assert own_redis.process is not None
        statuses: list[int] = []
        for fault in ("hang", "stop"):
            if fault == "hang":
                os.kill(own_redis.process.pid, signal.SIGSTOP)
            else:
                own_redis.stop()
            try:
                statuses += [login(instance, email, "wrong password entirely").status_code
                             for _ in range(4)]
                statuses.append(hosted_login(instance, email, "wrong password entirely")
                                .status_code)
            finally:
                if fault == "hang":
                    os.kill(own_redis.process.pid, signal.SIGCONT)
                else:
                    own_redis.start()
        assert not [s for s in statuses if s >= 500 and s != 503], statuses
        if fail_closed == "false":
            assert 503 not in statuses, statuses
        assert "Traceback" not in instance.log()
        instance.stop()


def test_redis_hung_logouts_stay_quick(
        own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    """Publishing revocations backs off like the checks: a hung Redis costs the first logout
    one timeout, and the next ones nothing."""
    instance = instance_factory(redis_deployment, workers=1, name="redis-hung-logout")
    email = new_email("hunglogout")
    signup(instance, email)
    sessions = [login(instance, email).json() for _ in range(12)]
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        seconds = []
        for tokens in sessions:
            response, took = timed(post, instance, "/api/v2/auth/logout",
                                   headers={"Authorization": f"Bearer {tokens['access_token']}"})
            # Committed, but not shared with the other instances: never a success (503).
            assert response.status_code == 503, response.text
            seconds.append(took)
        later = sorted(seconds[1:])
        assert later[len(later) // 2] < 0.1, f"logout p50 {later[len(later) // 2]:.3f} s"
        assert max(later) < QUICK_SECONDS, f"slowest logout {max(later):.2f} s"
        for tokens in sessions:  # refused all the same: the database holds the revocations
            assert_problem(verify(instance, tokens["access_token"]), 401, "session_revoked")
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)


def test_logouts_during_a_redis_outage_are_refused_on_another_instance_after_it(
        own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    """B's cache is warm when Redis stops; sessions are signed out on A while it is down (A
    cannot publish them); Redis comes back empty. B refuses every one of them from then on."""
    a = instance_factory(redis_deployment, name="outage-a")
    b = instance_factory(redis_deployment, name="outage-b")
    email = new_email("outage")
    signup(a, email)
    sessions = [login(a, email).json()["access_token"] for _ in range(20)]
    for _ in range(2):  # warm: every worker of B has them cached
        assert [verify(b, token).status_code for token in sessions] == [200] * 20

    own_redis.stop()
    try:
        for token in sessions[:10]:
            out = post(a, "/api/v2/auth/logout", headers={"Authorization": f"Bearer {token}"})
            assert out.status_code == 503, out.text  # committed, not yet shared: no success
    finally:
        own_redis.start()
    statuses = [verify(b, token).status_code for token in sessions]
    assert statuses == [401] * 10 + [200] * 10, statuses

    # And when Redis was only hung (it keeps its data): A publishes what it kept as soon as it
    # answers, with no request on A.
    sessions = [login(a, email).json()["access_token"] for _ in range(10)]
    for _ in range(2):
        assert [verify(b, token).status_code for token in sessions] == [200] * 10
    assert own_redis.process is not None
    os.kill(own_redis.process.pid, signal.SIGSTOP)
    try:
        for token in sessions:
            out = post(a, "/api/v2/auth/logout", headers={"Authorization": f"Bearer {token}"})
            assert out.status_code == 503, out.text  # committed, not yet shared: no success
    finally:
        os.kill(own_redis.process.pid, signal.SIGCONT)

    def published() -> bool:
        with own_redis.client() as client:
            return len(list(client.scan_iter(match="svc-auth:revoked:*"))) >= 20  # 10 before

    wait_until(published, 3, "A's kept revocations published once Redis answers")
    assert [verify(b, token).status_code for token in sessions] == [401] * 10
    assert "kept revocations published" in a.log()


@pytest.mark.parametrize("fault", ["stopped", "hung"])
def test_redis_down_the_signup_limit_holds_across_instances_and_workers(
        fault: str, own_redis: RedisServer, redis_deployment: dict[str, str],
        instance_factory: InstanceFactory) -> None:
    """Two instances of two workers, Redis stopped or hung: sign-ups are counted in the
    database, so "10 per hour" allows 10 in all (each worker's memory allowed 40)."""
    settings = {**redis_deployment, "SVC_RATELIMIT_ENABLED": "true",
                "SVC_LIMIT_SIGNUP": "10 per hour"}
    instances = [instance_factory(settings, name=f"signup-{n}") for n in "ab"]
    assert own_redis.process is not None
    pid = own_redis.process.pid
    if fault == "hung":
        os.kill(pid, signal.SIGSTOP)
    else:
        own_redis.stop()
    try:
        def attempt(index: int) -> int:
            return post(instances[index % 2], "/api/v2/auth/signup",
                        {"email": new_email(f"limited{index}"), "password": PASSWORD}
                        ).status_code

        with ThreadPoolExecutor(max_workers=8) as pool:
            statuses = list(pool.map(attempt, range(40)))
    finally:
        if fault == "hung":
            os.kill(pid, signal.SIGCONT)
        else:
            own_redis.start()
    assert statuses.count(201) == 10, statuses
    assert statuses.count(429) == 30, statuses


# (d) The mail server is down -----------------------------------------------------------------

def test_smtp_down_request_succeeds_and_delivery_is_retried(
        migrated_postgres_url: str, instance_factory: InstanceFactory) -> None:
    instance = instance_factory({
        **shared_settings(migrated_postgres_url),
        "SVC_MAIL_URL": f"smtp://127.0.0.1:{free_port()}",  # nothing listens there
        "SVC_MAIL_ATTEMPTS": "3", "SVC_MAIL_RETRY_DELAY": "0.2", "SVC_MAIL_TIMEOUT": "2",
    }, workers=1, name="smtp-down")
    email = new_email("nomail")
    signup(instance, email)  # its confirmation mail fails the same way: wait for it to give up
    gave_up = re.compile(r"failed after 3 attempts")
    wait_until(lambda: len(gave_up.findall(instance.log())) == 1, 10,
               "the confirmation mail given up")
    before = instance.log()

    asked, seconds = timed(post, instance, "/api/v2/auth/forgot-password", {"email": email})
    assert asked.status_code == 202, asked.text
    assert seconds < QUICK_SECONDS, f"forgot-password took {seconds:.2f} s"

    wait_until(lambda: len(gave_up.findall(instance.log())) == 2, 10,
               "the reset mail given up")
    new = instance.log()[len(before):]
    attempts = re.findall(r"attempt (\d) of 3 failed", new)
    assert attempts == ["1", "2", "3"], new
    assert len(gave_up.findall(new)) == 1
    assert "ConnectionRefusedError" in new  # the kind of failure, never the message
    for log in (instance.log(), instance.access()):
        assert "token=" not in log
        assert "/reset-password" not in log and "/confirm-email" not in log
    with psycopg.connect(migrated_postgres_url.replace("postgresql+psycopg", "postgresql"),
                         connect_timeout=5) as connection:
        issued = connection.execute(
            "SELECT count(*) FROM one_time_tokens t JOIN users u ON u.id = t.user_id"
            " WHERE u.email = %s AND t.purpose = 'reset_password'", (email,)).fetchone()
    assert issued == (1,)  # the link was made; only its delivery failed


# (e) A worker killed in the middle of writes -------------------------------------------------

def test_killed_worker_loses_no_committed_signup_or_password_change(
        migrated_postgres_url: str, instance_factory: InstanceFactory, workdir: Path) -> None:
    """30 sign-ups and 10 password resets at once on 2 workers, one of which is SIGKILLed
    while they run. gunicorn starts a new worker; every request that was answered with
    success is in effect afterwards (and the others left nothing half done)."""
    mail = workdir / "mail"
    instance = instance_factory({
        **shared_settings(migrated_postgres_url),
        "SVC_MAIL_URL": f"file://{mail}",
        # The production argon2id: slow enough that the kill lands mid-request.
        "SVC_ARGON2_MEMORY_COST": "19456", "SVC_ARGON2_TIME_COST": "2",
    }, name="kill")

    # 10 accounts with a reset link each, mailed to the file:// folder.
    resetting = [new_email("reset") for _ in range(10)]
    for address in resetting:
        signup(instance, address)
        asked = post(instance, "/api/v2/auth/forgot-password", {"email": address})
        assert asked.status_code == 202, asked.text
    links = {address: wait_until(lambda a=address: mailed_links(mail, a, "/reset-password"),
                                 15, f"a reset link for {address}")[-1]
             for address in resetting}
    reset_tokens = {a: link.rsplit("token=", 1)[1] for a, link in links.items()}

    victim = instance.worker_pids()[0]
    signing_up = [new_email("killed") for _ in range(30)]
    calls: list[tuple[str, str, dict[str, str]]] = (
        [("signup", a, {"email": a, "password": PASSWORD}) for a in signing_up]
        + [("reset", a, {"token": reset_tokens[a], "new_password": NEW_PASSWORD})
           for a in resetting])
    start = threading.Barrier(len(calls) + 1)

    finished: list[float] = []

    def call(item: tuple[str, str, dict[str, str]]) -> requests.Response | Exception:
        kind, _address, body = item
        start.wait(timeout=TIMEOUT)
        path = "/api/v2/auth/signup" if kind == "signup" else "/api/v2/auth/reset-password"
        try:
            return post(instance, path, body, timeout=30)
        except requests.RequestException as exc:
            return exc
        finally:
            finished.append(time.monotonic())

    with ThreadPoolExecutor(max_workers=len(calls)) as pool:
        futures = [pool.submit(call, item) for item in calls]
        start.wait(timeout=TIMEOUT)
        time.sleep(0.15)  # requests in flight: some answered, some running, most queued
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        results = [future.result(timeout=60) for future in futures]
    assert max(finished) > killed_at, "every request was over before the kill: proves nothing"

    instance.wait_for_workers(2)  # gunicorn replaced the killed worker
    assert victim not in instance.worker_pids()
    answered = {(kind, address): result for (kind, address, _), result in zip(calls, results,
                                                                               strict=True)}
    statuses = [r.status_code if isinstance(r, requests.Response) else type(r).__name__
                for r in results]
    assert not [s for s in statuses if isinstance(s, int) and s >= 500], statuses
    succeeded = [key for key, r in answered.items()
                 if isinstance(r, requests.Response) and r.status_code in (200, 201)]
    assert len(succeeded) >= 10, statuses  # the other worker went on serving

    for (kind, address), result in answered.items():
        expected = PASSWORD if kind == "signup" else NEW_PASSWORD
        logged_in = login(instance, address, expected)
        if isinstance(result, requests.Response) and result.status_code in (200, 201):
            assert logged_in.status_code == 200, (kind, address, logged_in.text)
            if kind == "reset":  # the old password is gone
                assert login(instance, address, PASSWORD).status_code == 401
        elif kind == "signup":
            # Lost with the worker: either committed whole (the account works) or not at all
            # (the address is free to sign up).
            if logged_in.status_code != 200:
                assert logged_in.status_code == 401, logged_in.text
                assert signup(instance, address)["user"]["email"] == address
        else:
            # A reset lost with the worker: the old password or the new one works, not neither.
            works = [logged_in.status_code, login(instance, address, PASSWORD).status_code]
            assert 200 in works, (address, works)
