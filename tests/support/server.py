"""One way to run gunicorn for the real-server tests and the benchmark: `start_gunicorn` starts it
on a free port of 127.0.0.1 with the shipped gunicorn.conf.py (or a config built on it) and an
environment of the caller's, waits until it answers, and hands back a `Gunicorn` that reads its
logs and stops it cleanly.

Used by tests/system/e2e (SQLite), tests/system/production (PostgreSQL and Redis),
tests/system/browser and
bench/run.py. Nothing here needs pytest: a server that does not start raises `GunicornError`, with
its log in the message.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tests.support.http import status_of
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN_CONF = ROOT / "gunicorn.conf.py"  # as it ships
HOST = "127.0.0.1"
STARTUP_TIMEOUT = 60.0  # a deadline on a condition: long enough for a loaded machine

# Every request the tests send can carry an `X-E2E-Id` header; the access log records it with the
# id of the worker process that answered, so a test can tell which worker served what.
TRACE_HEADER = "X-E2E-Id"
ACCESS_LOG_FORMAT = "%(p)s %({x-e2e-id}i)s %(m)s %(U)s %(s)s"

# Rate limits off and a cheap argon2id unless a test asks otherwise.
BASE_ENV = {
    "SVC_RATELIMIT_ENABLED": "false",
    "SVC_ARGON2_MEMORY_COST": "1024",
    "SVC_ARGON2_TIME_COST": "1",
    "SVC_ARGON2_PARALLELISM": "1",
}

# The tests' gunicorn config file (written into the server's work folder): the project's own
# gunicorn.conf.py, plus a hook that logs each worker once it has loaded the app: /health
# answers as soon as the first worker is up, and the tests need all of them.
READY_MARK = "e2e-worker-ready"
TRACED_CONFIG = f"""
import runpy
_project = runpy.run_path({str(GUNICORN_CONF)!r})
globals().update({{name: value for name, value in _project.items() if not name.startswith("_")}})


def post_worker_init(worker):
    _project["post_worker_init"](worker)
    worker.log.info("{READY_MARK} %s", worker.pid)
"""


class GunicornError(RuntimeError):
    """gunicorn did not start, or did not answer in time; the message carries its log."""


@dataclass
class Gunicorn:
    """A running gunicorn master: its address, its logs and its workers."""

    name: str
    base_url: str
    workdir: Path
    error_log: Path  # gunicorn's error log, where the app's log lines go too
    access_log: Path | None  # None: gunicorn.conf.py's own, on stdout, into `error_log`
    workers: int | None  # None: as many as the config says
    process: subprocess.Popen[bytes] = field(repr=False)

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def access(self) -> str:
        log = self.access_log
        return log.read_text(errors="replace") if log is not None and log.exists() else ""

    def ready_pids(self) -> set[int]:
        """Every worker that has loaded the app so far (including ones that died since); only
        with TRACED_CONFIG, which logs READY_MARK."""
        return {int(pid) for pid in re.findall(rf"{READY_MARK} (\d+)", self.log())}

    def worker_pids(self) -> list[int]:
        """The master's live child processes (the workers), from /proc."""
        children: list[int] = []
        for task in Path(f"/proc/{self.pid}/task").glob("*/children"):
            try:
                children.extend(int(pid) for pid in task.read_text().split())
            except OSError:
                continue
        return sorted(set(children))

    def traced_pids(self, traces: list[str], timeout: float = 30.0) -> dict[str, int]:
        """The worker that answered each traced request (with ACCESS_LOG_FORMAT). A worker writes
        its access-log line just after sending the response, so wait for lines not written yet."""
        deadline = time.monotonic() + timeout
        while True:
            known: dict[str, int] = {}
            for line in self.access().splitlines():
                parts = line.split(" ")
                if len(parts) == 5 and parts[1] != "-":
                    known[parts[1]] = int(parts[0].strip("<>"))
            if all(t in known for t in traces):
                return {t: known[t] for t in traces}
            if time.monotonic() > deadline:
                missing = [t for t in traces if t not in known]
                raise AssertionError(f"{self.name}: not in the access log: {missing}")
            time.sleep(0.05)

    def stop(self, timeout: float = 15.0) -> None:
        """SIGTERM (gunicorn's graceful shutdown); SIGKILL after `timeout` seconds."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


G = TypeVar("G", bound=Gunicorn)


def _wait_until_serving(server: Gunicorn, path: str, expect: int | None, ready_workers: int,
                        timeout: float) -> str | None:
    """None once `ready_workers` workers have loaded the app and GET `path` answers `expect`
    (any status when None); else why not."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            return f"gunicorn exited with {server.process.returncode}"
        if len(server.ready_pids()) >= ready_workers:
            status = status_of(server.url(path), timeout=2)
            if status is not None and (expect is None or status == expect):
                return None
        time.sleep(0.1)
    return (f"{len(server.ready_pids())} of {ready_workers} workers ready; GET {path} did not"
            f" answer {expect or 'at all'} within {timeout:.0f} s")


def start_gunicorn(workdir: Path, env: dict[str, str], *, name: str = "gunicorn",
                   app: str = "wsgi:app", cwd: Path = ROOT, config: Path = GUNICORN_CONF,
                   command: Sequence[str] = (sys.executable, "-m", "gunicorn"),
                   workers: int | None = None, options: Sequence[str] = (),
                   traced: bool = False, access_log_format: str | None = ACCESS_LOG_FORMAT,
                   public_url: bool = False, path: str = "/health", expect: int | None = 200,
                   timeout: float = STARTUP_TIMEOUT,
                   kind: Callable[..., G] = Gunicorn, **fields: Any) -> G:  # type: ignore[assignment]
    """`gunicorn --config CONFIG --bind 127.0.0.1:PORT [OPTIONS] APP` from `cwd` with `env`
    (plus PROMETHEUS_MULTIPROC_DIR in `workdir`, gunicorn.conf.py's metrics folder, unless `env`
    has it); wait until GET `path` answers `expect`.

    - `traced`: TRACED_CONFIG (the shipped config and a hook that logs each worker ready) in
      place of `config`, so the wait is for every worker to load the app, and an access log in
      `workdir` with `access_log_format` (None: gunicorn.conf.py's). Without it, stdout (where
      gunicorn.conf.py sends the access log) goes to the error log with the rest.
    - `public_url`: SVC_PUBLIC_URL is the server's own address unless `env` sets it.
    - `kind` and `fields`: a subclass of Gunicorn and its own fields.

    The free port may be taken between finding and binding it: three attempts."""
    workdir.mkdir(parents=True, exist_ok=True)
    if traced:
        config = workdir / "gunicorn_traced.conf.py"
        config.write_text(TRACED_CONFIG)
    for attempt in range(3):
        port = free_port()
        base_url = f"http://{HOST}:{port}"
        full_env = {"PROMETHEUS_MULTIPROC_DIR": str(workdir / "metrics"),
                    **({"SVC_PUBLIC_URL": base_url} if public_url else {}), **env}
        error_log = workdir / f"{name}-{attempt}.log"
        access_log = workdir / f"{name}-access-{attempt}.log" if traced else None
        logging: list[str] = []
        if access_log is not None:
            access_log.touch()
            logging = ["--access-logfile", str(access_log)]
            if access_log_format is not None:
                logging += ["--access-logformat", access_log_format]
        with open(error_log, "wb") as log:
            process = subprocess.Popen(
                [*command, "--config", str(config), "--bind", f"{HOST}:{port}",
                 *(["--workers", str(workers)] if workers is not None else []),
                 *logging, *options, app],
                cwd=cwd, env=full_env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL if traced else log, stderr=log,
            )
        server = kind(name=name, base_url=base_url, workdir=workdir, error_log=error_log,
                      access_log=access_log, workers=workers, process=process, **fields)
        try:
            problem = _wait_until_serving(server, path, expect,
                                          (workers or 1) if traced else 0, timeout)
        except BaseException:
            server.stop()
            raise
        if problem is None:
            return server
        server.stop()
        if "Address already in use" in server.log() and attempt < 2:
            continue
        raise GunicornError(f"{name}: {problem}\n--- gunicorn log ---\n{server.log()}")
    raise AssertionError("unreachable")


def service_environment(instance_path: Path, overrides: dict[str, str],
                        drop: tuple[str, ...] = ("SVC_",)) -> dict[str, str]:
    """This process's environment without its `drop` variables, then BASE_ENV, the instance
    folder and `overrides`: how the tests run the service."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env.update(BASE_ENV)
    env.update({"SVC_INSTANCE_PATH": str(instance_path), "PYTHONUNBUFFERED": "1"})
    env.update(overrides)
    return env


def flask_cli(env: dict[str, str], *args: str,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`flask --app wsgi ARGS` from the checkout, with `env`."""
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args], cwd=ROOT, env=env,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False,
    )
