"""A throwaway PostgreSQL server for the tests.

`start_postgres(base_dir)` runs Debian's initdb into `base_dir/postgres/data` and starts `postgres`
on 127.0.0.1 on a free port, with fsync off and other settings that trade durability for speed;
it returns a `PostgresServer`, whose `stop()` ends it. Fixtures:

- `postgres_server` (session): the running server; one per test session.
- `fresh_postgres_url` (function): the SQLAlchemy URL of a new, empty database of its own, dropped
  after the test (its connections are terminated first).

Under pytest-xdist each worker process has a session of its own, and so a server of its own.

PostgreSQL refuses to run as root. When the tests run as root, initdb and the server run as the
`postgres` system user, which Debian's postgresql package creates (if it is missing, a system user
`svc-test` is created with `useradd --system --no-create-home`). That user must be able to reach
`base_dir`, which pytest's own tmp_path (private to root) is not: the fixture uses a folder of its
own from `tempfile.mkdtemp`, opened for traversal (0711) and removed at the end of the session.
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

from tests.support.servers import (
    INSTALL_HINT,
    LOOPBACK,
    InfraError,
    clean_env,
    free_port,
    log_tail,
    pdeathsig_prefix,
    stop_process,
)

PG_BIN_GLOB = "/usr/lib/postgresql/*/bin"
SUPERUSER = "postgres"
SERVICE_USER = "postgres"  # created by Debian's postgresql package
FALLBACK_SERVICE_USER = "svc-test"
START_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
INITDB_TIMEOUT = 120.0

# Settings for a server that lives for one test run: nothing needs to survive a crash.
TEST_SETTINGS = {
    "fsync": "off",  # also -F
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "max_connections": "200",
    "jit": "off",  # short queries: compiling them costs more than it saves
    "autovacuum": "off",
    "timezone": "UTC",
    "log_timezone": "UTC",
    "log_line_prefix": "%m [%p] %q%u@%d ",
    "log_min_messages": "warning",
    "log_checkpoints": "off",
    "unix_socket_permissions": "0700",
}


def find_pg_bindir(pattern: str = PG_BIN_GLOB) -> Path:
    """The bin folder of the highest PostgreSQL version installed that has initdb and postgres."""
    found: list[tuple[tuple[int, ...], Path]] = []
    for entry in glob.glob(pattern):
        bindir = Path(entry)
        if all(os.access(bindir / exe, os.X_OK) for exe in ("initdb", "postgres")):
            version = tuple(int(n) for n in re.findall(r"\d+", bindir.parent.name)) or (0,)
            found.append((version, bindir))
    if not found:
        raise InfraError(
            f"PostgreSQL server binaries (initdb, postgres) not found in {pattern}: {INSTALL_HINT}"
        )
    return max(found)[1]


@dataclass(frozen=True)
class ServiceUser:
    name: str
    uid: int
    gid: int


def service_user() -> ServiceUser | None:
    """The user the server runs as when we are root (postgres won't run as root); None if we are
    not root, in which case it runs as us."""
    if os.geteuid() != 0:
        return None
    for name in (SERVICE_USER, FALLBACK_SERVICE_USER):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return ServiceUser(name, entry.pw_uid, entry.pw_gid)
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--user-group",
         "--shell", "/usr/sbin/nologin", FALLBACK_SERVICE_USER],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=30, check=False,
    )
    try:  # another test run may have created it at the same moment: look, don't trust the exit
        entry = pwd.getpwnam(FALLBACK_SERVICE_USER)
    except KeyError:
        raise InfraError(
            f"running as root, and neither user {SERVICE_USER!r} nor {FALLBACK_SERVICE_USER!r} "
            f"exists or could be created with useradd; PostgreSQL refuses to run as root"
        ) from None
    return ServiceUser(FALLBACK_SERVICE_USER, entry.pw_uid, entry.pw_gid)


def _check_reachable(path: Path, user: ServiceUser) -> None:
    groups = {user.gid, *(g for g in os.getgrouplist(user.name, user.gid))}
    for folder in [path, *path.parents]:
        st = folder.stat()
        if st.st_uid == user.uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            raise InfraError(
                f"PostgreSQL runs as user {user.name!r} (it refuses to run as root), which cannot "
                f"enter {folder}; give start_postgres a folder that user can reach, e.g. one from "
                f"tempfile.mkdtemp() with mode 0711"
            )


@dataclass
class PostgresServer:
    """A running PostgreSQL server on 127.0.0.1; the superuser `postgres` needs no password."""

    bindir: Path
    base_dir: Path
    data_dir: Path
    socket_dir: Path
    log_path: Path
    port: int
    version: int
    run_as: ServiceUser | None
    host: str = LOOPBACK
    user: str = SUPERUSER
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    def url(self, dbname: str = "postgres") -> str:
        """SQLAlchemy URL, e.g. postgresql+psycopg://postgres@127.0.0.1:PORT/dbname."""
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{dbname}"

    def conninfo(self, dbname: str = "postgres") -> str:
        """libpq connection string for psycopg.connect()."""
        return make_conninfo(
            host=self.host, port=self.port, user=self.user, dbname=dbname, connect_timeout=5,
            sslmode="disable", application_name="svc-auth-tests",
        )

    def connect(self, dbname: str = "postgres", **kwargs: Any) -> psycopg.Connection[Any]:
        """A new psycopg connection; the caller closes it (use it in a `with`)."""
        return psycopg.connect(self.conninfo(dbname), **kwargs)

    def create_database(self, name: str, template: str = "template0") -> str:
        """Creates database `name`, a copy of `template` (by default empty, UTF8); returns its
        URL. A template must have no connection open while it is copied."""
        strategy = sql.SQL(" STRATEGY FILE_COPY") if self.version >= 15 else sql.SQL("")
        with self.connect(autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}{}").format(
                    sql.Identifier(name), sql.Identifier(template), strategy
                )
            )
        return self.url(name)

    def drop_database(self, name: str) -> None:
        """Drops database `name` if it exists, terminating its connections first."""
        with self.connect(autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
            force = sql.SQL(" WITH (FORCE)") if self.version >= 13 else sql.SQL("")
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {}{}").format(sql.Identifier(name), force)
            )

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Fast shutdown (SIGINT: open sessions are rolled back), bounded; SIGKILL after 30 s.
        Raises InfraError if the server had died on its own before."""
        proc, self.process = self.process, None
        if proc is None:
            return
        died = proc.poll()
        stop_process(proc, signal.SIGINT, STOP_TIMEOUT)
        if died is not None:
            raise InfraError(
                f"PostgreSQL on port {self.port} had exited on its own (code {died}) before the "
                f"end of the tests; its log {self.log_path}:\n{log_tail(self.log_path)}"
            )


def _run_as(user: ServiceUser | None) -> dict[str, Any]:
    if user is None:
        return {}
    return {"user": user.uid, "group": user.gid, "extra_groups": []}


def _initdb(bindir: Path, data_dir: Path, log_path: Path, user: ServiceUser | None) -> None:
    cmd = [
        str(bindir / "initdb"), "-D", str(data_dir), "-A", "trust", "-U", SUPERUSER,
        "--encoding=UTF8", "--no-locale", "--no-sync",
    ]
    with log_path.open("ab") as log:
        try:
            result = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=data_dir.parent, env=clean_env(), timeout=INITDB_TIMEOUT, check=False,
                **_run_as(user),
            )
        except subprocess.TimeoutExpired:
            raise InfraError(
                f"initdb took over {INITDB_TIMEOUT:.0f} s; "
                f"its log {log_path}:\n{log_tail(log_path)}"
            ) from None
    if result.returncode != 0:
        raise InfraError(
            f"initdb failed (exit {result.returncode}); its log {log_path}:\n{log_tail(log_path)}"
        )


def _wait_ready(server: PostgresServer, deadline: float) -> str | None:
    """None once the server accepts connections; else why it never will (it exited)."""
    proc = server.process
    assert proc is not None
    while True:
        code = proc.poll()
        if code is not None:
            return f"postgres exited with code {code}"
        try:
            with psycopg.connect(server.conninfo("postgres"), connect_timeout=2) as conn:
                row = conn.execute("SELECT current_setting('data_directory')").fetchone()
        except psycopg.Error:  # not up yet (or not a PostgreSQL: then until the deadline)
            if time.monotonic() > deadline:
                return f"postgres did not accept connections within {START_TIMEOUT:.0f} s"
            time.sleep(0.05)
            continue
        if row is None or Path(row[0]).resolve() != server.data_dir.resolve():
            return f"port {server.port} is served by another PostgreSQL ({row})"
        return None


def start_postgres(base_dir: Path | str, port: int | None = None) -> PostgresServer:
    """initdb into `base_dir/postgres/data` and start a server on 127.0.0.1:`port` (free port if
    None). Output goes to `base_dir/postgres.log`. Waits up to 60 s for it to accept connections;
    raises InfraError with the log otherwise. Stop it with `.stop()`."""
    base = Path(base_dir).resolve()
    bindir = find_pg_bindir()
    user = service_user()
    if user is not None:
        _check_reachable(base, user)
    home = base / "postgres"
    data_dir, socket_dir = home / "data", home / "sock"
    socket_dir.mkdir(parents=True)
    if user is not None:
        for folder in (home, socket_dir):
            os.chown(folder, user.uid, user.gid)
    log_path = base / "postgres.log"

    _initdb(bindir, data_dir, log_path, user)
    version_file = (data_dir / "PG_VERSION").read_text().strip()
    version = int(version_file.split(".")[0])

    settings = [arg for k, v in TEST_SETTINGS.items() for arg in ("-c", f"{k}={v}")]
    attempts = 1 if port is not None else 3  # a free port may be taken before postgres binds it
    last_error = ""
    for _ in range(attempts):
        server = PostgresServer(
            bindir=bindir, base_dir=base, data_dir=data_dir, socket_dir=socket_dir,
            log_path=log_path, port=port or free_port(), version=version, run_as=user,
        )
        cmd = [
            *pdeathsig_prefix(signal.SIGINT),
            str(bindir / "postgres"), "-D", str(data_dir), "-k", str(socket_dir),
            "-h", LOOPBACK, "-p", str(server.port), "-F", *settings,
        ]
        with log_path.open("ab") as log:
            server.process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=home, env=clean_env(), start_new_session=True,
                **_run_as(user),
            )
        try:
            error = _wait_ready(server, time.monotonic() + START_TIMEOUT)
        except BaseException:  # interrupted: leave no server behind
            stop_process(server.process, signal.SIGQUIT, 10)
            raise
        if error is None:
            return server
        proc, server.process = server.process, None
        stop_process(proc, signal.SIGQUIT, 10)
        last_error = error
        if "could not bind" not in log_tail(log_path, 10) and "another" not in error:
            break
    raise InfraError(f"{last_error}; its log {log_path}:\n{log_tail(log_path)}")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole test session (127.0.0.1, free port, superuser
    `postgres`, trust auth). Fails, never skips, when PostgreSQL is not installed."""
    base = Path(tempfile.mkdtemp(prefix="svc-auth-pg-"))
    try:
        base.chmod(0o711)  # the server's user must be able to enter it (see the module doc)
        server, error = None, ""
        try:
            server = start_postgres(base)
        except InfraError as exc:
            error = str(exc)
        if server is None:
            pytest.fail(error, pytrace=False)  # outside the except: no chained traceback
        try:
            yield server
        finally:
            try:
                server.stop()
            except InfraError as exc:
                error = str(exc)
            if error:
                pytest.fail(error, pytrace=False)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _db_name(nodename: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", nodename.lower()).strip("_")[:40]
    return f"t_{slug}_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def fresh_postgres_url(
    postgres_server: PostgresServer, request: pytest.FixtureRequest
) -> Iterator[str]:
    """The SQLAlchemy URL of a new empty database for this test alone, dropped after it."""
    name = _db_name(request.node.name)
    url = postgres_server.create_database(name)
    try:
        yield url
    finally:
        postgres_server.drop_database(name)
