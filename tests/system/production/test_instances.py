"""Several instances behind one load balancer: real gunicorn processes on one PostgreSQL database
and one Redis, sharing the secret key, the signing key and the issuer.

Four instances, each with 2 sync workers, serve one deployment: A and B with the default refresh
reuse grace (10 s), C and D with none (0 s), so that reuse detection can be shown without waiting
out a grace window. Requests alternate between the instances of a pair, as a load balancer would
spread them.
"""

from __future__ import annotations

import re
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest
import requests

from tests.support.accounts import PASSWORD
from tests.support.admin import printed_credentials
from tests.support.api import (
    all_at_once,
    assert_problem,
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
    cli,
    migrate,
    new_workdir,
    shared_settings,
    start_instances,
)
from tests.support.http import bearer, wait_until

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer
    from tests.support.redis import RedisServer

pytestmark = pytest.mark.e2e

# Long, so that the checks of a warm cache fit inside it however slow a loaded machine is (the
# default is 5 s); a revocation must be seen at once whatever the cache's length.
CACHE_SECONDS = 60.0

LIMITS = {
    "SVC_SESSION_CACHE_SECONDS": str(CACHE_SECONDS),
    "SVC_RATELIMIT_ENABLED": "true",
    "SVC_LIMIT_LOGIN": "4 per minute",  # per address and email: the limit under test
    # Everything else high enough never to get in the way of the other tests.
    "SVC_LIMIT_LOGIN_IP": "10000 per minute",
    "SVC_LIMIT_SIGNUP": "10000 per minute",
    "SVC_LIMIT_REFRESH": "10000 per minute",
}


@dataclass
class Deployment:
    a: Instance
    b: Instance
    c: Instance  # C and D: no refresh reuse grace
    d: Instance
    postgres: PostgresServer
    dbname: str
    mail: Path
    workdir: Path
    settings: dict[str, str]  # what every instance shares

    def cli(self, *args: str) -> str:
        """`flask --app wsgi ARGS` with the deployment's settings; what it printed."""
        result = cli(self.workdir, self.settings, *args)
        assert result.returncode == 0, f"flask {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result.stdout

    def query(self, statement: str, *params: Any) -> list[tuple[Any, ...]]:
        with self.postgres.connect(self.dbname) as connection:
            return list(connection.execute(statement, params).fetchall())


@pytest.fixture(scope="module")
def deployment(postgres_server: PostgresServer,
               redis_server: RedisServer) -> Iterator[Deployment]:
    redis_server.flush()
    dbname = f"prod_instances_{uuid.uuid4().hex[:10]}"
    database_url = postgres_server.create_database(dbname)
    workdir = new_workdir("instances")
    try:
        migrate(workdir, database_url)  # once, for every instance
        shared = {**shared_settings(database_url, redis_server.url), **LIMITS,
                  "SVC_MAIL_URL": f"file://{workdir / 'mail'}"}
        instances = start_instances(workdir, [
            ("A", {**shared, "SVC_REFRESH_REUSE_GRACE": "10"}),
            ("B", {**shared, "SVC_REFRESH_REUSE_GRACE": "10"}),
            ("C", {**shared, "SVC_REFRESH_REUSE_GRACE": "0"}),
            ("D", {**shared, "SVC_REFRESH_REUSE_GRACE": "0"}),
        ])
        try:
            yield Deployment(*instances, postgres=postgres_server, dbname=dbname,
                             mail=workdir / "mail", workdir=workdir, settings=shared)
        finally:
            for instance in instances:
                instance.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        postgres_server.drop_database(dbname)


def on_every_worker(instance: Instance, call: Any, batches: int = 15) -> list[requests.Response]:
    """Call `call(trace)` in concurrent batches until every worker of `instance` has answered
    at least once (a busy worker leaves the next request to another); every response."""
    responses: list[requests.Response] = []
    seen: set[int] = set()
    for _ in range(batches):
        traces = [uuid.uuid4().hex for _ in range(instance.workers * 2)]
        with ThreadPoolExecutor(max_workers=len(traces)) as pool:
            responses.extend(pool.map(call, traces))
        seen |= set(instance.traced_pids(traces).values())
        if len(seen) >= instance.workers:
            return responses
    raise AssertionError(f"only workers {seen} of {instance.name} answered")


# (a) Rate limits are shared ------------------------------------------------------------------

def test_login_limit_is_shared_between_instances(deployment: Deployment) -> None:
    """4 per minute per address and email: wrong passwords alternating A, B, A, B use up the
    limit together, so the 5th attempt is refused on either instance, even with the right
    password. Per-instance counters would have allowed 4 on each."""
    a, b = deployment.a, deployment.b
    email = new_email("limit")
    signup(a, email)
    for instance in (a, b, a, b):
        assert_problem(login(instance, email, "wrong password entirely"), 401,
                       "invalid_credentials")
    for instance in (a, b):
        refused = login(instance, email)  # even the right password
        body = assert_problem(refused, 429, "rate_limited")
        assert 1 <= int(refused.headers["Retry-After"]) <= 60
        assert body["retry_after"] == int(refused.headers["Retry-After"])
    # Another account from the same address is not affected: the limit is per email too.
    other = new_email("limit-other")
    signup(b, other)
    assert login(a, other).status_code == 200


# (b) A logout on one instance is refused at once on another ----------------------------------

def test_logout_on_a_is_refused_at_once_on_b_with_a_warm_cache(deployment: Deployment) -> None:
    a, b = deployment.a, deployment.b
    tokens = signup(a, new_email("logout"))
    access = tokens["access_token"]

    # Every worker of B verifies the token first, so each holds it in its session cache.
    warm_at = time.monotonic()  # a worker caches its answer when it first verifies
    warmed = on_every_worker(b, lambda trace: verify(b, access, trace))
    assert {r.status_code for r in warmed} == {200}, [r.text for r in warmed]
    session_id = warmed[0].json()["session_id"]

    logged_out = post(a, "/api/v2/auth/logout", headers={"Authorization": f"Bearer {access}"})
    assert logged_out.status_code == 204, logged_out.text

    refused = on_every_worker(b, lambda trace: verify(b, access, trace))
    checked_within = time.monotonic() - warm_at
    for response in refused:
        assert_problem(response, 401, "session_revoked")
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    # Only meaningful while the cached answers were still fresh.
    assert checked_within < CACHE_SECONDS, f"took {checked_within:.1f} s: cannot tell"
    assert deployment.query("SELECT revoke_reason FROM sessions WHERE id = %s",
                            session_id) == [("logout",)]


def test_password_reset_on_b_ends_every_session_at_once_on_a(deployment: Deployment) -> None:
    """Several sessions revoked in one transaction (reset-password ends them all), each
    refused at once by every worker of the other instance, which had them cached."""
    a, b = deployment.a, deployment.b
    email = new_email("reset")
    sessions = [signup(a, email)] + [login(b, email).json() for _ in range(2)]
    asked = post(b, "/api/v2/auth/forgot-password", {"email": email})
    assert asked.status_code == 202, asked.text
    link = wait_until(lambda: mailed_links(deployment.mail, email, "/reset-password"), 10,
                      "the reset link in the mail folder")[-1]

    warm_at = time.monotonic()  # a worker caches its answer when it first verifies
    for tokens in sessions:  # cached by every worker of A
        warmed = on_every_worker(a, lambda trace, t=tokens: verify(a, t["access_token"], trace))
        assert {r.status_code for r in warmed} == {200}
    reset = post(b, "/api/v2/auth/reset-password",
                 {"token": link.rsplit("token=", 1)[1], "new_password": NEW_PASSWORD})
    assert reset.status_code == 200, reset.text

    for tokens in sessions:
        refused = on_every_worker(a, lambda trace, t=tokens: verify(a, t["access_token"], trace))
        for response in refused:
            assert_problem(response, 401, "session_revoked")
    assert time.monotonic() - warm_at < CACHE_SECONDS
    assert login(a, email, NEW_PASSWORD).status_code == 200


# (c) Refresh reuse is detected across instances ----------------------------------------------

def test_refresh_reuse_detected_across_instances(deployment: Deployment) -> None:
    """R1 -> R2 on C; R1 presented again on D (no grace) is refused and revokes the session,
    so R2 no longer works on C either, nor does any access token of the session."""
    c, d = deployment.c, deployment.d
    first = signup(c, new_email("reuse"))
    r1 = first["refresh_token"]
    session_id = verify(d, first["access_token"]).json()["session_id"]

    rotated = refresh(c, r1)
    assert rotated.status_code == 200, rotated.text
    r2 = rotated.json()["refresh_token"]
    assert r2 != r1

    assert_problem(refresh(d, r1), 401, "invalid_token")  # reuse, seen by another instance
    assert_problem(refresh(c, r2), 401, "invalid_token")  # the whole session is gone
    assert_problem(verify(c, rotated.json()["access_token"]), 401, "session_revoked")
    assert_problem(verify(d, first["access_token"]), 401, "session_revoked")

    assert deployment.query("SELECT revoke_reason FROM sessions WHERE id = %s",
                            session_id) == [("refresh_token_reused",)]
    events = deployment.query("SELECT count(*) FROM audit_events WHERE session_id = %s"
                              " AND event = 'refresh_token_reused'", session_id)
    assert events == [(1,)]


# (d) One email, 50 concurrent sign-ups on both instances -------------------------------------

def test_concurrent_signups_of_one_email_on_both_instances(deployment: Deployment) -> None:
    a, b = deployment.a, deployment.b
    email = new_email("race")

    def sign_up(index: int) -> requests.Response:
        # Different cases: one account whatever the spelling.
        address = email.upper() if index % 3 == 0 else email
        return post((a, b)[index % 2], "/api/v2/auth/signup",
                    {"email": address, "password": "another fine passphrase"})

    results = all_at_once(50, sign_up, return_errors=True)
    errors = [r for r in results if not isinstance(r, requests.Response)]
    assert not errors, errors
    statuses = Counter(r.status_code for r in results)
    assert statuses == {201: 1, 409: 49}, {s: n for s, n in statuses.items()}
    for response in results:
        if response.status_code == 409:
            assert_problem(response, 409, "email_taken")
    rows = deployment.query("SELECT count(*) FROM users WHERE email_key = %s", email.casefold())
    assert rows == [(1,)]
    assert login(b, email, "another fine passphrase").status_code == 200


# (e) One refresh token, 20 concurrent refreshes on both instances -----------------------------

def test_concurrent_refreshes_of_one_token_on_both_instances(deployment: Deployment) -> None:
    """Within the grace window every copy of the request gets the same successor: nobody is
    signed out, and the session keeps exactly one live refresh token."""
    a, b = deployment.a, deployment.b
    first = signup(b, new_email("tabs"))
    user_id = first["user"]["id"]
    original_session = verify(a, first["access_token"]).json()["session_id"]

    results = all_at_once(20, lambda i: refresh((a, b)[i % 2], first["refresh_token"]),
                          return_errors=True)
    errors = [r for r in results if not isinstance(r, requests.Response)]
    assert not errors, errors
    assert [r.status_code for r in results] == [200] * 20, [r.text for r in results]
    successors = {r.json()["refresh_token"] for r in results}
    assert len(successors) == 1, f"{len(successors)} different refresh tokens"
    successor = successors.pop()
    assert successor != first["refresh_token"]

    for index, response in enumerate(results):
        checked = verify((a, b)[index % 2], response.json()["access_token"])
        assert checked.status_code == 200, checked.text
        assert checked.json()["session_id"] == original_session

    live = deployment.query("SELECT id FROM sessions WHERE user_id = %s"
                            " AND revoked_at IS NULL", user_id)
    assert live == [(original_session,)]
    live_tokens = deployment.query("SELECT count(*) FROM refresh_tokens WHERE session_id = %s"
                                   " AND rotated_at IS NULL", original_session)
    assert live_tokens == [(1,)]
    # The successor is the session's live token: it refreshes, on either instance.
    again = refresh(a, successor)
    assert again.status_code == 200, again.text
    assert verify(b, again.json()["access_token"]).json()["session_id"] == original_session


def test_instances_share_issuer_and_keys(deployment: Deployment) -> None:
    """A token issued by any instance verifies on every other (the premise of the others)."""
    tokens = signup(deployment.d, new_email("keys"))
    for instance in (deployment.a, deployment.b, deployment.c, deployment.d):
        checked = verify(instance, tokens["access_token"])
        assert checked.status_code == 200, checked.text
    jwks = [requests.get(i.url("/.well-known/jwks.json"), timeout=10).json()
            for i in (deployment.a, deployment.b)]
    assert jwks[0] == jwks[1] and len(jwks[0]["keys"]) == 1


# (f) A plan set through the admin API on one instance is seen at once on another -------------

def test_a_plan_set_on_a_is_verified_at_once_on_b_with_a_warm_cache(
        deployment: Deployment) -> None:
    """The admin API (issue 23): billing puts an account on a plan through A; every worker of
    B, which had the person's session cached with the old plan, answers verify with the new one
    at once (the account's change mark in Redis), and the next refresh's token carries it."""
    a, b = deployment.a, deployment.b
    printed = deployment.cli("clients", "add", f"billing-{uuid.uuid4().hex[:8]}",
                             "--scope", "users:plan")
    credentials = printed_credentials(printed)
    person = signup(a, new_email("plan"))
    user_id, access = person["user"]["id"], person["access_token"]

    warm_at = time.monotonic()  # a worker caches its answer when it first verifies
    warmed = on_every_worker(b, lambda trace: verify(b, access, trace))
    assert {r.json()["user"]["plan"] for r in warmed} == {"free"}, [r.text for r in warmed]

    issued = requests.post(a.url("/oauth2/token"), auth=credentials, timeout=10,
                           data={"grant_type": "client_credentials", "scope": "users:plan"})
    assert issued.status_code == 200, issued.text
    changed = requests.patch(a.url(f"/api/admin/v1/users/{user_id}"), json={"plan": "pro"},
                             headers=bearer(issued.json()["access_token"]), timeout=10)
    assert changed.status_code == 200, changed.text

    seen = on_every_worker(b, lambda trace: verify(b, access, trace))
    checked_within = time.monotonic() - warm_at
    assert [r.status_code for r in seen] == [200] * len(seen), [r.text for r in seen]
    assert {r.json()["user"]["plan"] for r in seen} == {"pro"}
    # Only meaningful while the cached answers were still fresh.
    assert checked_within < CACHE_SECONDS, f"took {checked_within:.1f} s: cannot tell"
    refreshed = refresh(b, person["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    assert refreshed.json()["user"]["plan"] == "pro"
    assert deployment.query("SELECT count(*) FROM audit_events WHERE user_id = %s AND event"
                            " = 'plan_changed' AND actor = %s", user_id,
                            f"client:{credentials[0]}") == [(1,)]


# (g) An account's life (issue 24) through A is seen at once by every worker of B -------------

def _warm(instance: Instance, access: str) -> list[requests.Response]:
    """Every worker of `instance` verifies the token, so each holds the session in its cache."""
    warmed = on_every_worker(instance, lambda trace: verify(instance, access, trace))
    assert [r.status_code for r in warmed] == [200] * len(warmed), [r.text for r in warmed]
    return warmed


def test_leaving_through_a_is_refused_at_once_on_every_worker_of_b(
        deployment: Deployment) -> None:
    """The owner deletes the account through A (DELETE /api/v2/auth/account with the
    password); every worker of B, which had the session cached, refuses the token at once."""
    a, b = deployment.a, deployment.b
    email = new_email("leave")
    person = signup(a, email)
    user_id, access = person["user"]["id"], person["access_token"]

    warm_at = time.monotonic()  # a worker caches its answer when it first verifies
    session_id = _warm(b, access)[0].json()["session_id"]

    left = requests.delete(a.url("/api/v2/auth/account"), json={"password": PASSWORD},
                           headers=bearer(access), timeout=10)
    assert left.status_code == 202, left.text
    assert left.json()["erase_after"], left.text

    refused = on_every_worker(b, lambda trace: verify(b, access, trace))
    checked_within = time.monotonic() - warm_at
    for response in refused:
        assert_problem(response, 401, "session_revoked")
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    # Only meaningful while the cached answers were still fresh.
    assert checked_within < CACHE_SECONDS, f"took {checked_within:.1f} s: cannot tell"
    assert_problem(refresh(b, person["refresh_token"]), 401, "invalid_token")
    assert login(b, email).status_code == 401  # signs in no more, on any instance
    assert deployment.query("SELECT revoke_reason FROM sessions WHERE id = %s",
                            session_id) == [("account_deleted",)]
    assert deployment.query("SELECT deletion_scheduled_at IS NOT NULL FROM users WHERE id = %s",
                            user_id) == [(True,)]


def _use_mailed_link(instance: Instance, link: str) -> requests.Response:
    """Open a mailed link's page on `instance` as a browser does, and press its button (the
    form posts its CSRF token and the link's token back)."""
    parts = urlsplit(link)  # the deployment's public address: the same path on `instance`
    path = f"{parts.path}?{parts.query}"
    with requests.Session() as browser:
        page = browser.get(instance.url(path), timeout=10)
        assert page.status_code == 200 and "<button" in page.text, page.text
        csrf = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page.text)
        token = re.search(r'name="token"[^>]*value="([^"]+)"', page.text)
        assert csrf and token, page.text
        return browser.post(instance.url(path), timeout=10,
                            data={"csrf_token": csrf.group(1), "token": token.group(1)})


def test_an_address_change_confirmed_through_a_is_verified_at_once_on_b(
        deployment: Deployment) -> None:
    """A new address asked for and confirmed through A (the mailed link's page and button);
    every worker of B, which had the session cached with the old address, answers verify with
    the new one at once."""
    a, b = deployment.a, deployment.b
    old, new = new_email("moving"), new_email("moved")
    person = signup(a, old)
    access = person["access_token"]

    warm_at = time.monotonic()  # a worker caches its answer when it first verifies
    warmed = _warm(b, access)
    assert {r.json()["user"]["email"] for r in warmed} == {old}

    asked = post(a, "/api/v2/auth/email", {"new_email": new, "password": PASSWORD},
                 headers=bearer(access))
    assert asked.status_code == 202, asked.text
    link = wait_until(lambda: mailed_links(deployment.mail, new, "/email-change"), 10,
                      "the link to the new address in the mail folder")[-1]
    done = _use_mailed_link(a, link)
    assert done.status_code == 200, done.text
    assert f"Your account&#39;s address is now {new}." in done.text, done.text

    seen = on_every_worker(b, lambda trace: verify(b, access, trace))
    checked_within = time.monotonic() - warm_at
    assert [r.status_code for r in seen] == [200] * len(seen), [r.text for r in seen]
    assert {(r.json()["user"]["email"], r.json()["user"]["email_verified"])
            for r in seen} == {(new, True)}
    # Only meaningful while the cached answers were still fresh.
    assert checked_within < CACHE_SECONDS, f"took {checked_within:.1f} s: cannot tell"
    assert login(b, new).status_code == 200
    assert login(b, old).status_code == 401
