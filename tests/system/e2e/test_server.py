"""The service as a client site meets it: a real gunicorn process, over HTTP on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import sqlite3
import time
import uuid
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.support.accounts import PASSWORD
from tests.support.api import (
    all_at_once,
    assert_problem,
    get,
    new_email,
    post,
    refresh,
    signup,
    verify,
)
from tests.support.http import TIMEOUT, bearer
from tests.support.server import TRACE_HEADER
from tests.support.sqlite_server import Server, ServerFactory

pytestmark = pytest.mark.e2e


# Helpers -------------------------------------------------------------------------------------

def login(server: Server, email: str, version: str = "v2", **kwargs: Any) -> dict[str, Any]:
    body = {"email": email, "password": PASSWORD}
    if version == "v1":
        body["captcha_token"] = ""  # what the client sites send
    response = post(server, f"/api/{version}/auth/login", body, **kwargs)
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


def session_id(server: Server, access_token: str) -> str:
    response = verify(server, access_token)
    assert response.status_code == 200, response.text
    sid: str = response.json()["session_id"]
    return sid


def same_user(one: dict[str, Any], other: dict[str, Any]) -> bool:
    """The same account, by the fields every user object has (some responses add more)."""
    fields = ("id", "email", "full_name", "plan")
    return all(one[name] == other[name] for name in fields)


def jwt_header(token: str) -> dict[str, Any]:
    segment = token.split(".")[0]
    padded = segment + "=" * (-len(segment) % 4)
    header: dict[str, Any] = json.loads(base64.urlsafe_b64decode(padded))
    return header


# A client site's whole session ----------------------------------------------------------------

def test_signup_login_verify_refresh_logout(server: Server) -> None:
    email = new_email("life")
    signed_up = signup(server, email)
    assert signed_up["token_type"] == "bearer"
    assert signed_up["expires_in"] == 3600
    assert signed_up["user"]["email"] == email
    assert signed_up["user"]["plan"] == "free"

    logged_in = post(server, "/api/v2/auth/login", {"email": email, "password": PASSWORD})
    assert logged_in.status_code == 200
    assert logged_in.headers["Cache-Control"] == "no-store"
    tokens = logged_in.json()
    assert set(tokens) == {"access_token", "refresh_token", "token_type", "expires_in", "user"}

    verified = verify(server, tokens["access_token"])
    assert verified.status_code == 200
    checked = verified.json()
    assert checked["valid"] is True
    assert same_user(checked["user"], signed_up["user"])
    assert checked["expires_at"] > time.time()
    sid = checked["session_id"]
    assert sid != session_id(server, signed_up["access_token"])  # one session per sign-in

    v1 = refresh(server, tokens["refresh_token"], "v1")
    assert v1.status_code == 200, v1.text
    v1_pair = v1.json()
    assert set(v1_pair) == {"access_token", "refresh_token", "token_type", "expires_in"}
    assert v1_pair["refresh_token"] != tokens["refresh_token"]

    v2 = refresh(server, v1_pair["refresh_token"], "v2")
    assert v2.status_code == 200, v2.text
    v2_pair = v2.json()
    assert v2_pair["refresh_token"] not in (tokens["refresh_token"], v1_pair["refresh_token"])
    assert same_user(v2_pair["user"], signed_up["user"])
    assert session_id(server, v2_pair["access_token"]) == sid

    out = requests.post(server.url("/api/v2/auth/logout"), headers=bearer(v2_pair["access_token"]),
                        timeout=TIMEOUT)
    assert out.status_code == 204

    for access_token in (v2_pair["access_token"], v1_pair["access_token"], tokens["access_token"]):
        revoked = verify(server, access_token)
        assert_problem(revoked, 401, "session_revoked")
        assert revoked.headers["WWW-Authenticate"].startswith("Bearer")
    assert_problem(refresh(server, v2_pair["refresh_token"]), 401, "invalid_token")
    # The sign-up's own session was not this one: it is still live.
    assert verify(server, signed_up["access_token"]).status_code == 200


def test_tokens_of_either_version_work_on_both(server: Server) -> None:
    email = new_email("versions")
    signup(server, email)

    v1 = login(server, email, "v1")
    assert v1["session"] == {key: v1[key] for key in
                             ("access_token", "refresh_token", "token_type", "expires_in")}
    assert verify(server, v1["access_token"]).status_code == 200
    v1_refreshed = refresh(server, v1["refresh_token"], "v2")
    assert v1_refreshed.status_code == 200, v1_refreshed.text

    v2 = login(server, email, "v2")
    v2_refreshed = refresh(server, v2["refresh_token"], "v1")
    assert v2_refreshed.status_code == 200, v2_refreshed.text
    assert session_id(server, v2_refreshed.json()["access_token"]) == session_id(
        server, v2["access_token"])


# Four workers, one key -----------------------------------------------------------------------

def test_every_worker_signs_and_verifies_with_the_same_key(server: Server) -> None:
    email = new_email("workers")
    signup(server, email)
    run = uuid.uuid4().hex[:8]

    # Concurrent logins, so that sync workers (one request each at a time) share them out.
    tokens: dict[str, str] = {}
    for batch in range(6):
        traces = [f"login-{run}-{batch}-{i}" for i in range(4)]
        bodies = all_at_once(4, lambda i, traces=traces: login(
            server, email, headers={TRACE_HEADER: traces[i]}))
        tokens.update({t: b["access_token"] for t, b in zip(traces, bodies, strict=True)})
        issued_by = server.traced_pids(list(tokens))
        if len(set(issued_by.values())) >= 2:
            break
    assert len(set(issued_by.values())) >= 2, "every login landed on one worker"
    assert len({jwt_header(token)["kid"] for token in tokens.values()}) == 1

    # Verify every token again and again; each call lands on whichever worker accepts it.
    logins = list(tokens)
    sessions_seen: dict[str, set[str]] = {t: set() for t in logins}
    verified_by: dict[str, int] = {}
    calls = 0
    while calls < 40 or (not crossed(issued_by, verified_by) and calls < 200):
        batch_traces = []
        for _ in range(20):
            issuer = logins[calls % len(logins)]
            trace = f"verify-{run}-{calls}-{issuer}"
            response = verify(server, tokens[issuer], headers={TRACE_HEADER: trace})
            assert response.status_code == 200, response.text
            sessions_seen[issuer].add(response.json()["session_id"])
            batch_traces.append(trace)
            calls += 1
        verified_by.update(server.traced_pids(batch_traces))
    # Sequential calls may all land on one worker (a sync worker that just answered is the
    # first back at accept); the tokens were issued by two or more, so some crossed anyway.
    assert crossed(issued_by, verified_by), "no token was verified by a worker but its issuer"
    assert all(len(seen) == 1 for seen in sessions_seen.values())
    assert len(set().union(*sessions_seen.values())) == len(tokens)  # one session per login

    # Concurrent JWKS requests, so that several workers answer; every one publishes one key.
    key_sets, jwks_traces = [], []
    for batch in range(15):
        traces = [f"jwks-{run}-{batch}-{i}" for i in range(4)]
        responses = all_at_once(4, lambda i, traces=traces: get(
            server, "/.well-known/jwks.json", headers={TRACE_HEADER: traces[i]}))
        assert all(response.status_code == 200 for response in responses)
        key_sets += [response.json()["keys"] for response in responses]
        jwks_traces += traces
        if len(set(server.traced_pids(jwks_traces).values())) >= 2:
            break
    assert all(len(keys) == 1 for keys in key_sets), key_sets
    assert len({json.dumps(keys, sort_keys=True) for keys in key_sets}) == 1
    assert key_sets[0][0]["kid"] == jwt_header(next(iter(tokens.values())))["kid"]
    assert len(set(server.traced_pids(jwks_traces).values())) >= 2

    # The workers raced for the key file: one winner, no temporary file left behind.
    names = sorted(path.name for path in Path(server.instance_path).iterdir())
    assert "jwt-keys.json" in names
    assert not [name for name in names if name.startswith(".")], names


def crossed(issued_by: dict[str, int], verified_by: dict[str, int]) -> bool:
    """Whether some token was verified by a worker other than the one that signed it."""
    return any(pid != issued_by[trace.split("-", 3)[3]] for trace, pid in verified_by.items())


# Concurrency -----------------------------------------------------------------------------------

def test_concurrent_refreshes_of_one_token_share_one_successor(server: Server) -> None:
    email = new_email("tabs")
    first = signup(server, email)
    sid = session_id(server, first["access_token"])

    results = all_at_once(10, lambda _: refresh(server, first["refresh_token"]))

    assert [r.status_code for r in results] == [200] * 10, [r.text for r in results]
    bodies = [r.json() for r in results]
    successors = {body["refresh_token"] for body in bodies}
    assert len(successors) == 1, "the tabs were handed different refresh tokens"
    successor = successors.pop()
    assert successor != first["refresh_token"]
    for body in bodies:
        assert session_id(server, body["access_token"]) == sid

    user_id = first["user"]["id"]
    live = server.query("SELECT id FROM sessions WHERE user_id = ? AND revoked_at IS NULL", user_id)
    assert live == [(sid,)]
    unrotated = server.query(
        "SELECT count(*) FROM refresh_tokens WHERE session_id = ? AND rotated_at IS NULL", sid)
    assert unrotated == [(1,)]
    reused = server.query(
        "SELECT count(*) FROM audit_events WHERE user_id = ? AND event = 'refresh_token_reused'",
        user_id)
    assert reused == [(0,)]

    # Nobody was signed out: the shared successor works, and so do the old access tokens.
    after = refresh(server, successor)
    assert after.status_code == 200, after.text
    assert session_id(server, after.json()["access_token"]) == sid
    assert verify(server, first["access_token"]).status_code == 200


def test_concurrent_signups_of_one_email_make_one_account(server: Server) -> None:
    email = new_email("race")

    results = all_at_once(20, lambda _: post(
        server, "/api/v2/auth/signup", {"email": email, "password": PASSWORD}))

    statuses = Counter(r.status_code for r in results)
    assert statuses == {201: 1, 409: 19}, statuses
    for response in results:
        if response.status_code == 409:
            assert_problem(response, 409, "email_taken")
    assert server.query("SELECT count(*) FROM users WHERE email_key = ?", email) == [(1,)]


def test_verify_is_not_blocked_by_a_writer(server: Server) -> None:
    """SQLite in WAL mode lets readers run beside a writer; verify only reads."""
    token = signup(server, new_email("reader"))["access_token"]
    assert verify(server, token).status_code == 200
    with closing(sqlite3.connect(server.database, timeout=15, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # what a login, refresh or purge holds for a moment
        status = None
        try:
            status = requests.get(server.url("/api/v2/auth/verify"), headers=bearer(token),
                                  timeout=2).status_code
        except requests.Timeout:
            pass  # still waiting for the writer's lock
        finally:
            writer.execute("ROLLBACK")
    assert status == 200, "verify waited for the writer's lock"


# Refresh-token reuse -------------------------------------------------------------------------

def test_reuse_after_the_grace_window_revokes_the_whole_session(
        server_factory: ServerFactory) -> None:
    server = server_factory(env={"SVC_REFRESH_REUSE_GRACE": "0"}, workers=2)
    first = signup(server, new_email("reuse"))
    r1 = first["refresh_token"]
    rotated = refresh(server, r1)
    assert rotated.status_code == 200, rotated.text
    r2, a2 = rotated.json()["refresh_token"], rotated.json()["access_token"]
    sid = session_id(server, a2)
    time.sleep(0.05)

    assert_problem(refresh(server, r1), 401, "invalid_token")
    assert_problem(refresh(server, r2), 401, "invalid_token")  # the newest token died too
    assert_problem(verify(server, a2), 401, "session_revoked")
    assert_problem(verify(server, first["access_token"]), 401, "session_revoked")

    assert server.query("SELECT revoke_reason FROM sessions WHERE id = ?", sid) == [
        ("refresh_token_reused",)]
    events = server.query(
        "SELECT count(*) FROM audit_events WHERE session_id = ? AND event = 'refresh_token_reused'",
        sid)
    assert events == [(1,)]


# Client addresses and rate limits ------------------------------------------------------------

RATE_LIMITED = {"SVC_RATELIMIT_ENABLED": "true", "SVC_LIMIT_LOGIN_IP": "3 per minute"}


def wrong_login(server: Server, forwarded_for: str) -> requests.Response:
    # A different unknown email each time: only the per-address limit can be reached.
    return post(server, "/api/v2/auth/login",
                {"email": new_email("guess"), "password": "not the password"},
                headers={"X-Forwarded-For": forwarded_for})


def test_forwarded_for_is_ignored_without_trusted_proxies(server_factory: ServerFactory) -> None:
    # One worker: the embedded default keeps rate-limit counters in each process's memory.
    server = server_factory(env={**RATE_LIMITED, "SVC_TRUSTED_PROXIES": "0"}, workers=1)

    statuses = [wrong_login(server, f"203.0.113.{i}").status_code for i in range(1, 4)]
    assert statuses == [401, 401, 401]
    limited = wrong_login(server, "203.0.113.4")

    body = assert_problem(limited, 429, "rate_limited")
    retry_after = int(limited.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    assert isinstance(body["retry_after"], int)
    assert abs(body["retry_after"] - retry_after) <= 1
    assert wrong_login(server, "198.51.100.7").status_code == 429


def test_forwarded_for_is_honoured_through_a_trusted_proxy(server_factory: ServerFactory) -> None:
    """The control for the test above: with one trusted hop, each forwarded address counts."""
    server = server_factory(env={**RATE_LIMITED, "SVC_TRUSTED_PROXIES": "1"}, workers=1)

    spread = [wrong_login(server, f"203.0.113.{i}").status_code for i in range(1, 6)]
    assert spread == [401] * 5
    same = [wrong_login(server, "198.51.100.7").status_code for _ in range(4)]
    assert same == [401, 401, 401, 429]


# Request bodies and error shapes -------------------------------------------------------------

ONE_MEGABYTE = json.dumps({"email": "a" * (1024 * 1024) + "@example.com",
                           "password": PASSWORD}).encode()
BODY_ENDPOINTS = ["/api/v2/auth/signup", "/api/v2/auth/login", "/api/v1/auth/login",
                  "/api/v2/auth/refresh", "/api/v1/auth/refresh"]


def assert_rejects_one_megabyte(server: Server) -> None:
    for path in BODY_ENDPOINTS:
        response = requests.post(server.url(path), data=ONE_MEGABYTE, timeout=TIMEOUT,
                                 headers={"Content-Type": "application/json"})
        assert_problem(response, 413, "payload_too_large")
    assert get(server, "/health").status_code == 200


def test_a_one_megabyte_body_is_413(server: Server) -> None:
    assert_rejects_one_megabyte(server)


def test_a_one_megabyte_body_is_413_with_rate_limits_on(server_factory: ServerFactory) -> None:
    # The login limits key on the email in the body, so they read it before the view does.
    server = server_factory(env={"SVC_RATELIMIT_ENABLED": "true"}, workers=1)
    assert_rejects_one_megabyte(server)


@pytest.fixture(scope="module")
def live_token(server: Server) -> str:
    token: str = signup(server, new_email("errors"))["access_token"]
    return token


ERROR_CASES = [
    pytest.param("GET", "/api/v2/auth/verify", {}, None, 401, "missing_token", id="no-token"),
    pytest.param("GET", "/api/v2/auth/verify", {"Authorization": "Bearer not.a.jwt"}, None,
                 401, "invalid_token", id="bad-token"),
    pytest.param("POST", "/api/v2/auth/login", {},
                 {"email": "nobody@example.com", "password": "not the password"},
                 401, "invalid_credentials", id="wrong-password"),
    pytest.param("POST", "/api/v2/auth/refresh", {}, {"refresh_token": "nope"},
                 401, "invalid_token", id="bad-refresh"),
    pytest.param("GET", "/api/v2/nothing-here", {}, None, 404, "not_found", id="unknown-path"),
    pytest.param("GET", "/api/v2/auth/login", {}, None, 405, "method_not_allowed", id="method"),
    pytest.param("POST", "/api/v2/auth/login", {"Content-Type": "text/plain"}, "x",
                 422, "invalid_body", id="not-json"),
    pytest.param("POST", "/api/v2/auth/signup", {},
                 {"email": "x@example.com", "password": PASSWORD, "plan": "pro"},
                 422, "invalid_body", id="unknown-field"),
    pytest.param("POST", "/api/v2/auth/logout?scope=everywhere", "live", None,
                 422, "invalid_body", id="bad-scope"),
]


@pytest.mark.parametrize(("method", "path", "headers", "body", "status", "code"), ERROR_CASES)
def test_errors_are_problem_json(server: Server, live_token: str, method: str, path: str,
                                 headers: Any, body: Any, status: int, code: str) -> None:
    if headers == "live":
        headers = bearer(live_token)
    data = body if isinstance(body, str) else None
    payload = body if not isinstance(body, str) else None
    response = requests.request(method, server.url(path), headers=headers, data=data,
                                json=payload, timeout=TIMEOUT)
    assert_problem(response, status, code)
    if status == 401 and path.endswith("/verify"):
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
    if status == 405:
        assert "POST" in response.headers["Allow"]
