"""The test servers really work: PostgreSQL databases are real and apart, Redis stores, forgets,
goes down and comes back on its port."""

from __future__ import annotations

import socket
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg
import pytest
import redis
import sqlalchemy as sa

from tests.support.servers import InfraError

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer
    from tests.support.redis import RedisServer

# Registered here so that this module runs on its own; the root conftest may register them too
# (pytest loads a plugin once). Not imported at the top: pytest must import them first, as plugins,
# for their asserts to be rewritten.


# --- PostgreSQL -----------------------------------------------------------------------------------


def test_postgres_server_is_local_and_fast(postgres_server: PostgresServer) -> None:
    port = postgres_server.port
    assert postgres_server.url("x") == f"postgresql+psycopg://postgres@127.0.0.1:{port}/x"
    with postgres_server.connect() as conn:
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN"
                " ('fsync', 'listen_addresses', 'server_encoding', 'port')"
            ).fetchall()
        )
        me = conn.execute("SELECT current_user").fetchone()
    assert settings == {
        "fsync": "off", "listen_addresses": "127.0.0.1", "server_encoding": "UTF8",
        "port": str(postgres_server.port),
    }
    assert me == ("postgres",)


def test_fresh_database_create_insert_read(fresh_postgres_url: str) -> None:
    engine = sa.create_engine(fresh_postgres_url)
    try:
        with engine.begin() as conn:
            assert sa.inspect(conn).get_table_names() == []
            conn.execute(sa.text("CREATE TABLE account (id serial PRIMARY KEY, email text UNIQUE)"))
            conn.execute(
                sa.text("INSERT INTO account (email) VALUES (:a), (:b)"),
                {"a": "ada@example.com", "b": "bob@example.com"},
            )
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, email FROM account ORDER BY id")).all()
            with pytest.raises(sa.exc.IntegrityError):
                conn.execute(sa.text("INSERT INTO account (email) VALUES ('ada@example.com')"))
    finally:
        engine.dispose()
    assert [tuple(r) for r in rows] == [(1, "ada@example.com"), (2, "bob@example.com")]


def test_fresh_databases_are_apart(postgres_server: PostgresServer) -> None:
    a, b = (f"iso_{uuid.uuid4().hex[:12]}" for _ in range(2))
    postgres_server.create_database(a)
    postgres_server.create_database(b)
    try:
        with postgres_server.connect(a) as conn:
            conn.execute("CREATE TABLE only_in_a (x int)")
            conn.execute("INSERT INTO only_in_a VALUES (1)")
        with postgres_server.connect(b) as conn:
            found = conn.execute("SELECT to_regclass('only_in_a')").fetchone()
        assert found == (None,)
        with postgres_server.connect(a) as conn:
            assert conn.execute("SELECT x FROM only_in_a").fetchall() == [(1,)]
    finally:
        postgres_server.drop_database(a)
        postgres_server.drop_database(b)


def test_drop_database_ends_open_connections(postgres_server: PostgresServer) -> None:
    name = f"busy_{uuid.uuid4().hex[:12]}"
    postgres_server.create_database(name)
    with postgres_server.connect(name) as conn:
        conn.execute("SELECT 1")
        conn.commit()
        postgres_server.drop_database(name)  # does not wait for this connection
        with pytest.raises(psycopg.OperationalError):
            conn.execute("SELECT 1")
    with postgres_server.connect() as conn:
        left = conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", (name,))
        assert left.fetchone() == (0,)


def test_fresh_postgres_url_is_dropped_after_the_test(
    postgres_server: PostgresServer, request: pytest.FixtureRequest
) -> None:
    names: list[str] = []

    def is_gone() -> None:
        with postgres_server.connect() as conn:
            left = conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", names)
            assert left.fetchone() == (0,), f"{names[0]} is still there after the test"

    # Finalizers run last-in first-out: this one, added before the fixture is set up, runs after
    # the fixture's teardown.
    request.addfinalizer(is_gone)
    url = request.getfixturevalue("fresh_postgres_url")
    names.append(url.rsplit("/", 1)[1])
    assert names[0].startswith("t_test_fresh_postgres_url_is_dropped")
    with postgres_server.connect() as conn:
        here = conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", names)
        assert here.fetchone() == (1,)


def test_missing_postgres_says_what_to_run(tmp_path: Path) -> None:
    from tests.support.postgres import find_pg_bindir

    with pytest.raises(InfraError, match="scripts/install-test-tools"):
        find_pg_bindir(str(tmp_path / "no-such" / "*" / "bin"))


def test_the_highest_postgres_version_is_picked(tmp_path: Path) -> None:
    from tests.support.postgres import find_pg_bindir

    for version in ("9.6", "13", "15", "not-a-server"):
        bindir = tmp_path / version / "bin"
        bindir.mkdir(parents=True)
        if version != "not-a-server":
            for exe in ("initdb", "postgres"):
                (bindir / exe).touch(mode=0o755)
    assert find_pg_bindir(str(tmp_path / "*" / "bin")) == tmp_path / "15" / "bin"


# --- Redis ----------------------------------------------------------------------------------------


def test_redis_set_get_and_flush(redis_server: RedisServer) -> None:
    assert redis_server.url == f"redis://127.0.0.1:{redis_server.port}/0"
    with redis.Redis.from_url(redis_server.url) as client:
        client.set("greeting", "hello")
        assert client.get("greeting") == b"hello"
        redis_server.flush()
        assert client.get("greeting") is None
        assert client.dbsize() == 0


def test_redis_stop_refuses_then_start_serves_on_the_same_port(redis_server: RedisServer) -> None:
    port = redis_server.port
    with redis_server.client() as client:
        client.set("survives", "no")
    try:
        redis_server.stop()
        assert not redis_server.running
        with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
            sock.settimeout(2)
            sock.connect(("127.0.0.1", port))
        with redis_server.client() as client, pytest.raises(redis.ConnectionError):
            client.ping()
    finally:
        redis_server.start()
    assert redis_server.running
    assert redis_server.port == port
    with redis.Redis.from_url(redis_server.url, socket_timeout=5) as client:
        assert client.ping() is True
        assert client.get("survives") is None  # no persistence: a restart starts empty


def test_redis_stop_and_start_are_idempotent(redis_server: RedisServer) -> None:
    redis_server.start()  # already running: nothing happens
    assert redis_server.running
    try:
        redis_server.stop()
        redis_server.stop()
    finally:
        redis_server.start()
    with redis_server.client() as client:
        assert client.ping() is True


def test_missing_redis_says_what_to_run(tmp_path: Path) -> None:
    from tests.support.redis import find_redis_server

    with pytest.raises(InfraError, match="scripts/install-test-tools"):
        find_redis_server(path=str(tmp_path))
