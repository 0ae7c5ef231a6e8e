"""Production-shape servers: gunicorn instances on PostgreSQL and Redis, over HTTP on 127.0.0.1
(tests/support/deployment.py).

`workdir` is a work folder for the test; `instance_factory(env, workers=2, name=...)` starts an
instance in it, stopped when the test ends; `own_postgres` is a PostgreSQL server for the test
alone, which it may stop and start again (tests.support.deployment.restart_postgres);
`own_redis` a Redis server for the module's tests, which they may stop or hang (SIGSTOP);
`migrated_postgres_url` a database of the test's own on the session's PostgreSQL server, as
`flask db upgrade` leaves it.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.deployment import (
    Instance,
    InstanceFactory,
    migrate,
    new_workdir,
    start_instance,
)

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer
    from tests.support.redis import RedisServer


@pytest.fixture
def workdir() -> Iterator[Path]:
    folder = new_workdir("test")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def instance_factory(workdir: Path) -> Iterator[InstanceFactory]:
    """`instance_factory(env, workers=2, name=...)`: an instance stopped when the test ends."""
    started: list[Instance] = []

    def start(env: dict[str, str], workers: int = 2, name: str = "instance") -> Instance:
        started.append(start_instance(workdir, env, workers=workers, name=name))
        return started[-1]

    try:
        yield start
    finally:
        for instance in started:
            instance.stop()


@pytest.fixture(scope="session")
def migrated_template(postgres_server: PostgresServer) -> Iterator[str]:
    """The name of a database that `flask db upgrade` migrated, once a session, to be copied."""
    name = f"t_migrated_{uuid.uuid4().hex[:12]}"
    folder = new_workdir("template")
    try:
        migrate(folder, postgres_server.create_database(name))
        yield name
    finally:
        postgres_server.drop_database(name)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def migrated_postgres_url(postgres_server: PostgresServer,
                          migrated_template: str) -> Iterator[str]:
    """A database for this test alone, dropped after it, as `flask db upgrade` leaves it: a copy
    of `migrated_template` (the migrations take seconds, the copy hundredths)."""
    name = f"t_prod_{uuid.uuid4().hex[:12]}"
    url = postgres_server.create_database(name, template=migrated_template)
    try:
        yield url
    finally:
        postgres_server.drop_database(name)


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server for this test alone, which it may stop and start again."""
    from tests.support.postgres import start_postgres

    base = Path(tempfile.mkdtemp(prefix="svc-prod-pg-"))
    base.chmod(0o711)  # PostgreSQL runs as its own user when the tests run as root
    server = None
    try:
        server = start_postgres(base)
        yield server
    finally:
        try:
            if server is not None:
                server.stop()  # raises if it had died on its own
        finally:
            shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    """A Redis server for this module's tests, which they stop and start again, or hang."""
    from tests.support.redis import start_redis

    base = Path(tempfile.mkdtemp(prefix="svc-prod-redis-"))
    server = None
    try:
        server = start_redis(base)
        yield server
    finally:
        if server is not None:
            if server.process is not None:  # a test that failed may have left it hung
                os.kill(server.process.pid, signal.SIGCONT)
            server.stop()
        shutil.rmtree(base, ignore_errors=True)
