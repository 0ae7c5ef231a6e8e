"""svc-auth served by a real gunicorn on a fresh instance folder and SQLite file database: what
tests/system/e2e, tests/system/browser and tests/system/client_kit run against.

The database is migrated with `flask db upgrade` run on a *different* instance folder, so the
served instance folder holds nothing but the database file when gunicorn starts: its workers
race to create the signing keys and the secret key, which is what the key tests rely on.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.server import (
    ACCESS_LOG_FORMAT,
    Gunicorn,
    flask_cli,
    service_environment,
    start_gunicorn,
)


@dataclass
class LogLine:
    pid: int
    trace: str
    method: str
    path: str
    status: int


@dataclass
class Server(Gunicorn):
    instance_path: Path = Path()
    database: Path = Path()
    settings: dict[str, str] = field(default_factory=dict, repr=False)  # its environment

    def access_lines(self) -> list[LogLine]:
        """What gunicorn logged so far: which worker (pid) answered which request."""
        lines = []
        for raw in self.access().splitlines():
            parts = raw.split(" ")
            if len(parts) != 5:
                continue
            pid, trace, method, path, status = parts
            lines.append(LogLine(int(pid.strip("<>")), trace, method, path, int(status)))
        return lines

    def pids_by_trace(self) -> dict[str, int]:
        return {line.trace: line.pid for line in self.access_lines() if line.trace != "-"}

    def cli(self, *args: str) -> str:
        """`flask --app wsgi ARGS` with the service's settings (its database, its instance
        folder), as an administrator runs it next to the server; what it printed."""
        result = flask_cli({"SVC_PUBLIC_URL": self.base_url, **self.settings}, *args)
        assert result.returncode == 0, f"flask {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result.stdout

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the server's database directly (read-only), to check what the API cannot show."""
        uri = f"file:{self.database}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=15)) as connection:
            return list(connection.execute(sql, params).fetchall())


ServerFactory = Callable[..., Server]


def _environment(instance: Path, database: Path, overrides: dict[str, str]) -> dict[str, str]:
    return service_environment(instance, {"SVC_DATABASE_URL": f"sqlite:///{database}",
                                          **overrides})


def service_env(server: Server) -> dict[str, str]:
    """The environment the server runs with, for the flask CLI on its database."""
    return service_environment(server.instance_path, {
        "SVC_DATABASE_URL": f"sqlite:///{server.database}", "SVC_PUBLIC_URL": server.base_url})


def start_server(workdir: Path, env: dict[str, str] | None = None, workers: int = 4,
                 access_log_format: str | None = ACCESS_LOG_FORMAT) -> Server:
    """Migrate a fresh SQLite database and serve it with gunicorn; wait until every worker has
    loaded the app and GET /health answers 200. `access_log_format=None` keeps
    gunicorn.conf.py's own. Raises tests.support.server.GunicornError."""
    overrides = dict(env or {})
    instance = workdir / "instance"
    instance.mkdir(parents=True)
    database = instance / "svc-auth.db"
    # A separate instance folder: `db upgrade` builds the app, which would otherwise create the
    # signing keys before gunicorn's workers get the chance to race for them.
    migrated = flask_cli(_environment(workdir / "migrate-instance", database, overrides),
                         "db", "upgrade")
    if migrated.returncode != 0:
        raise AssertionError(f"flask db upgrade failed ({migrated.returncode}):\n"
                             f"{migrated.stderr}")
    leftovers = sorted(p.name for p in instance.iterdir() if p.name != database.name
                       and not p.name.startswith(database.name))
    assert not leftovers, f"the instance folder is not fresh: {leftovers}"
    environment = _environment(instance, database, overrides)
    return start_gunicorn(
        workdir, environment, name="gunicorn", workers=workers,
        options=["--worker-class", "sync", "--timeout", "60", "--graceful-timeout", "5",
                 "--no-control-socket"],  # gunicorn 27's default socket path is per user
        traced=True, access_log_format=access_log_format, public_url=True,
        kind=Server, instance_path=instance, database=database, settings=environment)


def new_workdir(prefix: str) -> Path:
    # Not pytest's tmp_path: another pytest session on the machine prunes old pytest-N folders,
    # which would delete a running server's database from under it.
    return Path(tempfile.mkdtemp(prefix=f"svc-e2e-{prefix}-"))


@contextmanager
def server_pool(prefix: str = "extra") -> Iterator[ServerFactory]:
    """`start(env={...}, workers=N, access_log_format=...)` starts another server, each in a work
    folder of its own; every one is stopped and its folder removed on leaving."""
    started: list[Server] = []
    workdirs: list[Path] = []

    def start(env: dict[str, str] | None = None, workers: int = 4,
              access_log_format: str | None = ACCESS_LOG_FORMAT) -> Server:
        workdirs.append(new_workdir(prefix))
        started.append(start_server(workdirs[-1], env, workers, access_log_format))
        return started[-1]

    try:
        yield start
    finally:
        for running in started:
            running.stop()
        for workdir in workdirs:
            shutil.rmtree(workdir, ignore_errors=True)
