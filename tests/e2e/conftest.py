"""A real `gunicorn wsgi:app` on 127.0.0.1, on a fresh instance folder and SQLite file database.

`server` is one 4-worker server shared by the session. `server_factory` starts more servers with
other settings (rate limits on, trusted proxies, no reuse grace) and stops them after the test.

The database is migrated with `flask db upgrade` run on a *different* instance folder, so the
served instance folder holds nothing but the database file when gunicorn starts: its 4 workers
race to create the signing keys and the secret key, which is what the key tests rely on.

Every request the tests send can carry an `X-E2E-Id` header; gunicorn's access log records it
with the id of the worker process that answered, so a test can tell which worker served what.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.infra import free_port

ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 25.0
PASSWORD = "correct horse battery staple"
TRACE_HEADER = "X-E2E-Id"

# Rate limits off and a cheap argon2id unless a test asks otherwise.
BASE_ENV = {
    "SVC_RATELIMIT_ENABLED": "false",
    "SVC_ARGON2_MEMORY_COST": "1024",
    "SVC_ARGON2_TIME_COST": "1",
    "SVC_ARGON2_PARALLELISM": "1",
}

ACCESS_LOG_FORMAT = "%(p)s %({x-e2e-id}i)s %(m)s %(U)s %(s)s"

# The gunicorn config file (written into the server's work folder): the project's own
# gunicorn.conf.py, plus a hook that logs each worker once it has loaded the app: /health
# answers as soon as the first worker is up, and the tests need all of them.
READY_MARK = "e2e-worker-ready"
GUNICORN_CONFIG = f"""
import runpy
_project = runpy.run_path({str(ROOT / "gunicorn.conf.py")!r})
globals().update({{name: value for name, value in _project.items() if not name.startswith("_")}})


def post_worker_init(worker):
    _project["post_worker_init"](worker)
    worker.log.info("{READY_MARK} %s", worker.pid)
"""


@dataclass(frozen=True)
class LogLine:
    pid: int
    trace: str
    method: str
    path: str
    status: int


@dataclass
class Server:
    base_url: str
    instance_path: Path
    database: Path
    access_log: Path
    error_log: Path
    workers: int
    process: subprocess.Popen[bytes] = field(repr=False)

    def url(self, path: str) -> str:
        return self.base_url + path

    def access_lines(self) -> list[LogLine]:
        """What gunicorn logged so far: which worker (pid) answered which request."""
        lines = []
        for raw in self.access_log.read_text().splitlines():
            parts = raw.split(" ")
            if len(parts) != 5:
                continue
            pid, trace, method, path, status = parts
            lines.append(LogLine(int(pid.strip("<>")), trace, method, path, int(status)))
        return lines

    def pids_by_trace(self) -> dict[str, int]:
        return {line.trace: line.pid for line in self.access_lines() if line.trace != "-"}

    def pids_of(self, traces: list[str], timeout: float = 5.0) -> dict[str, int]:
        """The worker that answered each traced request. A worker writes its access-log line
        just after sending the response, so wait a moment for lines not written yet."""
        deadline = time.monotonic() + timeout
        while True:
            known = self.pids_by_trace()
            if all(trace in known for trace in traces) or time.monotonic() > deadline:
                missing = [trace for trace in traces if trace not in known]
                assert not missing, f"not in the access log: {missing}"
                return {trace: known[trace] for trace in traces}
            time.sleep(0.05)

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Read the server's database directly (read-only), to check what the API cannot show."""
        uri = f"file:{self.database}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True, timeout=15)) as connection:
            return list(connection.execute(sql, params).fetchall())

    def ready_workers(self) -> int:
        return len({line.split()[-1] for line in self.stderr().splitlines()
                    if READY_MARK in line})

    def stderr(self) -> str:
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # gunicorn: graceful shutdown
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def _environment(instance: Path, database: Path, overrides: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    env.update(BASE_ENV)
    env.update({
        "PROMETHEUS_MULTIPROC_DIR": str(instance.parent / "metrics"),  # gunicorn.conf.py's
        "SVC_INSTANCE_PATH": str(instance),
        "SVC_DATABASE_URL": f"sqlite:///{database}",
        "PYTHONUNBUFFERED": "1",
    })
    env.update(overrides)
    return env


def _migrate(workdir: Path, database: Path, overrides: dict[str, str]) -> None:
    # A separate instance folder: `db upgrade` builds the app, which would otherwise create the
    # signing keys before gunicorn's workers get the chance to race for them.
    env = _environment(workdir / "migrate-instance", database, overrides)
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )
    if result.returncode != 0:
        pytest.fail(f"flask db upgrade failed ({result.returncode}):\n{result.stderr}")


def _wait_until_healthy(server: Server) -> str | None:
    """None once every worker has loaded the app and GET /health answers 200; else why not."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return f"gunicorn exited with {server.process.returncode}"
        if server.ready_workers() < server.workers:
            time.sleep(0.1)
            continue
        try:
            response = requests.get(server.url("/health"), timeout=2)
        except requests.RequestException:
            time.sleep(0.1)
            continue
        if response.status_code == 200:
            return None
        time.sleep(0.1)
    return (f"{server.ready_workers()} of {server.workers} workers ready; GET /health did not"
            f" answer 200 within {STARTUP_TIMEOUT:.0f} s")


def start_server(workdir: Path, env: dict[str, str] | None = None, workers: int = 4,
                 access_log_format: str | None = ACCESS_LOG_FORMAT) -> Server:
    """Migrate a fresh SQLite database and serve it with gunicorn; wait for /health.
    `access_log_format=None` keeps gunicorn.conf.py's own."""
    overrides = dict(env or {})
    instance = workdir / "instance"
    instance.mkdir(parents=True)
    database = instance / "svc-auth.db"
    _migrate(workdir, database, overrides)
    leftovers = sorted(p.name for p in instance.iterdir() if p.name != database.name
                       and not p.name.startswith(database.name))
    assert not leftovers, f"the instance folder is not fresh: {leftovers}"

    config = workdir / "gunicorn_e2e.conf.py"
    config.write_text(GUNICORN_CONFIG)
    for attempt in range(3):  # the free port may be taken between finding and binding it
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        full_env = _environment(instance, database, {"SVC_PUBLIC_URL": base_url, **overrides})
        access_log = workdir / f"access-{attempt}.log"
        error_log = workdir / f"gunicorn-{attempt}.log"
        access_log.touch()
        with open(error_log, "wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}",
                 "--workers", str(workers), "--worker-class", "sync", "--timeout", "60",
                 "--graceful-timeout", "5",
                 "--access-logfile", str(access_log),
                 *(["--access-logformat", access_log_format] if access_log_format else []),
                 "--no-control-socket",  # gunicorn 27's default socket path is per user, shared
                 "--config", str(config),
                 "wsgi:app"],
                cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        server = Server(base_url, instance, database, access_log, error_log, workers, process)
        try:
            problem = _wait_until_healthy(server)
        except BaseException:
            server.stop()
            raise
        if problem is None:
            return server
        server.stop()
        if "Address already in use" in server.stderr() and attempt < 2:
            continue
        pytest.fail(f"{problem}\n--- gunicorn stderr ---\n{server.stderr()}")
    raise AssertionError("unreachable")


def _workdir(prefix: str) -> Path:
    # Not pytest's tmp_path: another pytest session on the machine prunes old pytest-N folders,
    # which would delete a running server's database from under it.
    return Path(tempfile.mkdtemp(prefix=f"svc-e2e-{prefix}-"))


@pytest.fixture(scope="session")
def server() -> Iterator[Server]:
    """One real server for the session: 4 sync workers, rate limits off, cheap argon2id."""
    workdir = _workdir("main")
    try:
        running = start_server(workdir)
        yield running
        running.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


ServerFactory = Callable[..., Server]


@pytest.fixture
def server_factory() -> Iterator[ServerFactory]:
    """`server_factory(env={...}, workers=N)`: another server, stopped when the test ends."""
    started: list[Server] = []
    workdirs: list[Path] = []

    def start(env: dict[str, str] | None = None, workers: int = 4,
              access_log_format: str | None = ACCESS_LOG_FORMAT) -> Server:
        workdirs.append(_workdir("extra"))
        running = start_server(workdirs[-1], env, workers, access_log_format)
        started.append(running)
        return running

    try:
        yield start
    finally:
        for running in started:
            running.stop()
        for workdir in workdirs:
            shutil.rmtree(workdir, ignore_errors=True)
