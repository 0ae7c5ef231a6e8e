"""A real `gunicorn wsgi:app` on 127.0.0.1, on a fresh instance folder and SQLite file database
(tests/support/sqlite_server.py).

`server` is one 4-worker server shared by the session. `server_factory` starts more servers with
other settings (rate limits on, trusted proxies, no reuse grace) and stops them after the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.sqlite_server import Server, ServerFactory, server_pool


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """One real server for the session: 4 sync workers, rate limits off, cheap argon2id."""
    with server_pool("main") as start:
        yield start()


@pytest.fixture
def server_factory() -> Iterator[ServerFactory]:
    """`server_factory(env={...}, workers=N)`: another server, stopped when the test ends."""
    with server_pool() as start:
        yield start
