"""A site added or removed with `flask sites` is seen by CORS at once by every worker of every
instance (app/domain/clients/origins.py): two gunicorn instances of two workers each, sharing a
PostgreSQL database and a Redis, each worker answering from its own copy of the origins."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.api import new_email, signup, verify
from tests.support.deployment import InstanceFactory, cli, shared_settings

if TYPE_CHECKING:
    from tests.support.redis import RedisServer

pytestmark = pytest.mark.e2e

ORIGIN = "https://shop.example.com"
CALLS = 8  # enough that both workers of an instance answer some (each keeps its own copy)


def allowed(instance: object, token: str) -> set[str | None]:
    """What each of CALLS verifies from ORIGIN's pages was told about CORS."""
    found = set()
    for _ in range(CALLS):
        response = verify(instance, token, headers={"Origin": ORIGIN})  # type: ignore[arg-type]
        assert response.status_code == 200, response.text
        found.add(response.headers.get("Access-Control-Allow-Origin"))
    return found


def test_a_site_added_or_removed_is_seen_at_once_by_every_worker_of_every_instance(
        own_redis: RedisServer, migrated_postgres_url: str, instance_factory: InstanceFactory,
        workdir: Path) -> None:
    own_redis.flush()
    settings = shared_settings(migrated_postgres_url, own_redis.url)
    a = instance_factory(settings, workers=2, name="origins-a")
    b = instance_factory(settings, workers=2, name="origins-b")
    token = signup(a, new_email("origins"))["access_token"]
    assert allowed(a, token) == allowed(b, token) == {None}  # every copy made, without it
    added = cli(workdir, settings, "sites", "add", "shop", "--redirect-uri",
                f"{ORIGIN}/callback", "--origin", ORIGIN)
    assert added.returncode == 0, added.stderr
    assert allowed(a, token) == allowed(b, token) == {ORIGIN}
    removed = cli(workdir, settings, "sites", "remove", "shop")
    assert removed.returncode == 0, removed.stderr
    assert allowed(a, token) == allowed(b, token) == {None}
