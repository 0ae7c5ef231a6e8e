"""The family sites' origins are kept by each worker (app/domain/clients/origins.py): a call
from a browser reads no database for them, and a site added, changed or removed on one instance
is seen by CORS on every other at once: with Redis by the session feed, without it by the
sites' mark in the database."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from flask import Flask

from app.domain.clients import registration
from app.domain.clients.registration import Changes
from tests.support.apps import build_app, dispose_app
from tests.support.counting import Counter

if TYPE_CHECKING:
    from tests.support.redis import RedisServer

SHOP, OTHER = "https://shop.example.com", "https://other.example.com"


@pytest.fixture(params=["database", "redis"])
def settings(request: pytest.FixtureRequest) -> dict[str, Any]:
    if request.param == "database":
        return {}
    server: RedisServer = request.getfixturevalue("redis_server")
    server.flush()
    return {"REDIS_URL": server.url}


@pytest.fixture
def b(tmp_path: Any, clock: Any, settings: dict[str, Any], database_url: str,
      app: Flask) -> Iterator[Flask]:
    """A second instance on the same database (and Redis, if any), with the same keys."""
    other = build_app(tmp_path / "instance", clock, settings, database_url)
    yield other
    dispose_app(other)


def allowed(app: Flask, token: str, origin: str = SHOP) -> str | None:
    response = app.test_client().get("/api/v2/auth/verify", headers={
        "Authorization": f"Bearer {token}", "Origin": origin})
    assert response.status_code == 200, response.get_json()
    found: str | None = response.headers.get("Access-Control-Allow-Origin")
    return found


def test_a_site_added_changed_or_removed_on_one_instance_is_seen_by_the_other_at_once(
        app: Flask, b: Flask, user: Any, login: Any) -> None:
    token = login(user)["access_token"]
    assert allowed(b, token) is None  # b's copy made, without the site
    with app.app_context():
        registration.add_site("shop", [f"{SHOP}/callback"], [SHOP])
    assert allowed(b, token) == SHOP
    with app.app_context():
        registration.update_site("shop", Changes(origins=[OTHER]))
    assert allowed(b, token) is None
    assert allowed(b, token, OTHER) == OTHER
    with app.app_context():
        registration.remove_site("shop")
    assert allowed(b, token, OTHER) is None


def test_a_call_from_a_browser_reads_no_database_for_the_origins(
        app: Flask, b: Flask, user: Any, login: Any, settings: dict[str, Any]) -> None:
    token = login(user)["access_token"]
    with app.app_context():
        registration.add_site("shop", [f"{SHOP}/callback"], [SHOP])
    for _ in range(3):
        assert allowed(b, token) == SHOP
    counter = Counter(b)
    try:
        with counter.counting() as seen:
            assert allowed(b, token) == SHOP
    finally:
        counter.close()
    # With Redis, nothing at all (the session from the cache, the origins from the copy);
    # without, the session's lookup on the driver, which reads the sites' mark with it.
    assert seen == ([] if settings else ["driver: SELECT sessions"])


def cors_of(response: Any) -> str | None:
    found: str | None = response.headers.get("Access-Control-Allow-Origin")
    return found


def test_a_call_whose_session_lookup_reads_no_mark_still_sees_a_change_at_once(
        app: Flask, b: Flask, user: Any, login: Any) -> None:
    """The sites' mark comes with the session's lookup when there is one; a preflight (no
    token) and a refused token ask the database for it, never an earlier request's."""
    token = login(user)["access_token"]
    browser = b.test_client()
    preflight = {"Origin": SHOP, "Access-Control-Request-Method": "GET"}
    refused = {"Origin": SHOP, "Authorization": "Bearer not-a-token"}
    assert allowed(b, token) is None  # b's copy made, without the site
    assert browser.get("/api/v2/auth/verify",
                       headers={"Authorization": f"Bearer {token}"}).status_code == 200
    with app.app_context():
        registration.add_site("shop", [f"{SHOP}/callback"], [SHOP])
    assert cors_of(browser.options("/api/v2/auth/verify", headers=preflight)) == SHOP
    with app.app_context():
        registration.remove_site("shop")
    response = browser.get("/api/v2/auth/verify", headers=refused)
    assert response.status_code == 401
    assert cors_of(response) is None
    assert cors_of(browser.options("/api/v2/auth/verify", headers=preflight)) is None
    with app.app_context():
        registration.add_site("shop", [f"{SHOP}/callback"], [SHOP])
    assert cors_of(browser.get("/api/v2/auth/verify", headers=refused)) == SHOP
    assert allowed(b, token) == SHOP
