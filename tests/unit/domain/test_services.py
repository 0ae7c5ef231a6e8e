"""app/domain/services.py: the services the factory builds from the settings, one set per app,
which `services()` hands to the domain (no service locator to borrow from)."""

from __future__ import annotations

from app.domain.services import build, services
from app.infra.settings import settings_of


def test_each_app_has_its_own_services_built_from_its_settings(app, tmp_path):
    with app.app_context():
        found = services()
        assert services() is found  # built once, at start
        assert found.redis is None  # no SVC_REDIS_URL: no handle to hand out
    other = build(settings_of(app), str(tmp_path))
    assert other is not found and other.hasher is not found.hasher


def test_a_redis_url_gives_a_handle_without_connecting(app, tmp_path):
    # Port 9 (discard) on the loopback: nothing answers there, and nothing is asked yet.
    from dataclasses import replace
    made = build(replace(settings_of(app), redis_url="redis://127.0.0.1:9/0"), str(tmp_path))
    assert made.redis is not None
    assert made.redis.connection_pool.connection_kwargs["port"] == 9
