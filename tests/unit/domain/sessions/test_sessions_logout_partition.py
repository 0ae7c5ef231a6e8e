"""A logout on an instance cut off from Redis while the other instances still hear it (issue 33,
finding 14): the other instances answer from their copies, which the logout could not reach, so
the logout does not answer success (503); it is committed and kept, and published as soon as the
instance reaches Redis again. A logout that answers success has been published: every instance
refuses the session from then on.

Two apps on one database are two instances reaching a real Redis: A through a TCP proxy
(tests/support/tcp_proxy.py), so that cutting it is a partition between A and Redis; B directly,
as an instance on the loopback does, since a proxy's own forwarding thread would delay what Redis
has already written to B's socket.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from tests.support import admin
from tests.support.apps import build_app, dispose_app
from tests.support.oidc import SITES, signed_in_tokens
from tests.support.pages import submit
from tests.support.tcp_proxy import TcpProxy
from tests.unit.infra.test_live_sessions import UNSHARED, logout, verify


@pytest.fixture
def proxy_a(redis_server: Any) -> Iterator[TcpProxy]:
    proxy = TcpProxy(redis_server.host, redis_server.port)
    yield proxy
    proxy.close()


@pytest.fixture
def settings(redis_server: Any, proxy_a: TcpProxy) -> dict[str, Any]:
    redis_server.flush()
    # Long, so that only the copy (not the cache's expiry) can make B refuse a session.
    return {"REDIS_URL": proxy_a.url(), "SESSION_CACHE_SECONDS": 60, "CLIENT_SITES": SITES}


@pytest.fixture
def b(tmp_path: Any, clock: Any, settings: dict[str, Any], database_url: str,
      redis_server: Any, app: Flask) -> Iterator[Flask]:
    other = build_app(tmp_path / "instance", clock,  # the same keys as A
                      {**settings, "REDIS_URL": redis_server.url}, database_url)
    yield other
    dispose_app(other)


def cached_on(instance: Flask, token: str) -> None:
    """A few calls: the instance subscribes, caches the session, and trusts its copy."""
    assert [verify(instance, token) for _ in range(3)] == [200] * 3


def eventually(condition: Any, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "never happened"
        time.sleep(0.05)


def test_with_every_instance_reaching_redis_a_logout_is_refused_at_once_everywhere(
        app, b, user, login):
    token = login(user)["access_token"]
    cached_on(b, token)
    assert logout(app, token) == 204
    assert verify(b, token) == 401  # B's copy has it: no wait for the cache


def test_a_logout_on_an_instance_cut_off_from_redis_does_not_answer_success(
        app, b, user, login, proxy_a):
    token = login(user)["access_token"]
    cached_on(b, token)
    proxy_a.cut()
    assert logout(app, token) == UNSHARED
    assert verify(app, token) == 401  # committed: A itself refuses it (from the database)
    proxy_a.heal()
    # A publishes what it kept once Redis answers it, with no further call on A.
    eventually(lambda: verify(b, token) == 401)
    assert logout(app, token) == 401  # a retry finds the session ended


def test_the_hosted_sign_out_cut_off_from_redis_does_not_answer_success(
        app, b, client, user, proxy_a):
    submit(client, "/login", {"email": user.email, "password": user.password})
    assert client.get("/account").status_code == 200
    proxy_a.cut()
    response = submit(client, "/logout", {}, token_from="/account")
    assert response.status_code == UNSHARED and "Location" not in response.headers
    proxy_a.heal()
    assert client.get("/account").status_code == 302  # committed: the session is over


def test_a_sign_in_that_replaces_a_session_still_answers_cut_off_from_redis(
        app, b, client, user, proxy_a):
    """Not a logout anyone waits on: the new session is what the answer gives."""
    submit(client, "/login", {"email": user.email, "password": user.password})
    proxy_a.cut()
    again = submit(client, "/login", {"email": user.email, "password": user.password},
                   token_from="/account")
    assert again.status_code == 302, again.text
    assert client.get("/account").status_code == 200


def test_an_openid_connect_logout_cut_off_from_redis_does_not_answer_success(
        app, b, client, user, proxy_a):
    tokens = signed_in_tokens(client, user)
    cached_on(b, tokens["access_token"])
    proxy_a.cut()
    response = client.get("/oauth2/logout", query_string={"id_token_hint": tokens["id_token"]})
    assert response.status_code == UNSHARED and "Location" not in response.headers


def test_an_operators_end_of_sessions_cut_off_from_redis_does_not_answer_success(
        app, b, user, login, proxy_a):
    session = login(user)["access_token"]
    cached_on(b, session)
    operator = app.test_client()
    credentials = admin.register(app, "support", "sessions:revoke")
    bearer = admin.authorized(admin.token(operator, credentials))
    proxy_a.cut()
    response = operator.delete(f"/api/admin/v1/users/{user.id}/sessions", **bearer)
    assert response.status_code == UNSHARED
