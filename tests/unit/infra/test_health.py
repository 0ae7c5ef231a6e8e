"""The dependency probes (app/infra/health.py): one round trip each, never an exception."""

from __future__ import annotations

from redis import Redis

from app.extensions import db
from app.infra.health import database_answers, redis_answers


def test_a_redis_that_is_not_there_does_not_answer(tmp_path):
    nobody = Redis(unix_socket_path=str(tmp_path / "no-redis.sock"), socket_connect_timeout=0.5)
    assert redis_answers(nobody) is False


def test_the_database_answers(app):
    with app.app_context():
        assert database_answers(db.session) is True
