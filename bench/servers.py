"""The servers the benchmark runs, and their set-up: each started with tests/support's gunicorn
launcher, on 127.0.0.1 only, with the project's gunicorn.conf.py as it ships (fastapi-users with
bench/peer_gunicorn_conf.py); the service's instances on migrated and seeded SQLite databases."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
if str(ROOT) not in sys.path:  # run as `python bench/run.py`: the project's packages
    sys.path.insert(0, str(ROOT))

from tests.support.server import GUNICORN_CONF, Gunicorn, GunicornError, start_gunicorn  # noqa: E402

STARTUP_TIMEOUT = 60.0
PEER_CONF = BENCH / "peer_gunicorn_conf.py"
PUBLIC_URL = "https://auth.bench.invalid"
FASTAPI_USERS_PACKAGES = ["fastapi-users[sqlalchemy]", "aiosqlite", "uvicorn[standard]",
                          "uvicorn-worker", "gunicorn"]


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from its 3rd field (the state) on; None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def status_kib(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


@dataclass
class BenchServer(Gunicorn):
    """A server under load: its CPU time, its workers' peak memory, whether it is idle."""

    peak_rss_kib: dict[int, int] = field(default_factory=dict)

    @property
    def port(self) -> int:
        return int(self.base_url.rsplit(":", 1)[1])

    def cpu_seconds(self) -> float:
        """The CPU time of the master and its workers, including workers already recycled
        (the master's cutime and cstime: its children that exited and were waited for)."""
        total = 0
        master = _stat_fields(self.pid)
        if master is not None:
            total += sum(int(value) for value in master[11:15])  # utime, stime, cutime, cstime
        for pid in self.worker_pids():
            fields = _stat_fields(pid)
            if fields is not None:
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / os.sysconf("SC_CLK_TCK")

    def wait_idle(self, cap: float, interval: float = 0.5) -> float:
        """Wait until the workers use under 5% of a core, twice running; returns how long they
        stayed busy (`cap` when they never went quiet)."""
        started = time.monotonic()
        quiet, last = 0, self.cpu_seconds()
        while time.monotonic() - started < cap:
            time.sleep(interval)
            now = self.cpu_seconds()
            quiet = quiet + 1 if now - last < 0.05 * interval else 0
            last = now
            if quiet >= 2:
                return max(0.0, time.monotonic() - started - quiet * interval)
        return cap

    def sample_rss(self) -> None:
        for pid in self.worker_pids():
            peak = status_kib(pid, "VmHWM")
            if peak is not None:
                self.peak_rss_kib[pid] = max(peak, self.peak_rss_kib.get(pid, 0))

    def counters(self) -> dict[str, Any] | None:
        return None  # the CPU time is all a single server reports

    def delta(self, before: dict[str, Any], requests: int,
              service_cpu_ms: float) -> dict[str, float]:
        return {}

    def stop(self, timeout: float = 20.0) -> None:
        if self.process.poll() is None:
            self.sample_rss()
        super().stop(timeout)


def start_server(name: str, app: str, cwd: Path, env: dict[str, str], workdir: Path,
                 workers: int | None, *, python: str = sys.executable,
                 worker_class: str = "sync", config: Path = GUNICORN_CONF,
                 path: str = "/health", expect: int = 200) -> BenchServer:
    """`gunicorn --config CONFIG APP` from `cwd` (`workers` None: as many as the config says),
    its log and metrics in a folder of its own under `workdir`; once GET `path` answers
    `expect`."""
    try:
        return start_gunicorn(
            workdir / name, env, name=name, app=app, cwd=cwd, config=config,
            command=[python, "-m", "gunicorn"], workers=workers,
            options=["--worker-class", worker_class], path=path, expect=expect,
            timeout=STARTUP_TIMEOUT, kind=BenchServer)
    except GunicornError as error:
        raise SystemExit(f"{name} did not start:\n{error}") from error


def clean_env() -> dict[str, str]:
    # Nothing inherited from the caller's SVC_* settings: in particular no SVC_ARGON2_*.
    return {k: v for k, v in os.environ.items()
            if not k.startswith(("SVC_", "PROMETHEUS_MULTIPROC_DIR", "GUNICORN_CMD_ARGS"))}


def service_env(folder: Path) -> dict[str, str]:
    instance = folder / "instance"
    instance.mkdir(parents=True)
    env = clean_env()
    env.update({
        "SVC_ENV": "production",
        "SVC_PUBLIC_URL": PUBLIC_URL,
        "SVC_INSTANCE_PATH": str(instance),
        "SVC_DATABASE_URL": f"sqlite:///{instance / 'svc-auth.db'}",
        "SVC_RATELIMIT_ENABLED": "false",
        "SVC_SECRET_KEY": secrets.token_urlsafe(32),
        "SVC_MAIL_URL": f"file://{folder / 'mail'}",
    })
    return env


def migrate_template(workdir: Path) -> Path:
    """Migrate one empty database; each service instance starts from a copy of it."""
    env = service_env(workdir / "template")
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"flask db upgrade failed:\n{result.stderr}")
    return Path(env["SVC_DATABASE_URL"].removeprefix("sqlite:///"))


@dataclass
class Instance:
    """One service instance's folder, seeded database and token pools."""

    name: str
    folder: Path
    env: dict[str, str]
    accounts: int
    seed: dict[str, Any] = field(default_factory=dict)

    @property
    def pools(self) -> Path:
        return self.folder / "pools"

    @property
    def mail(self) -> Path:
        return self.folder / "mail"

    def first_access_token(self) -> str:
        return (self.pools / "access.txt").read_text().split("\n", 1)[0]


def prepare_instance(name: str, workdir: Path, template: Path, accounts: int,
                     refresh: int) -> Instance:
    folder = workdir / name
    env = service_env(folder)
    shutil.copyfile(template, env["SVC_DATABASE_URL"].removeprefix("sqlite:///"))
    return seed_instance(name, folder, env, accounts, refresh)


def seed_instance(name: str, folder: Path, env: dict[str, str], accounts: int,
                  refresh: int) -> Instance:
    """bench/seed.py with an instance's environment, on its migrated database."""
    instance = Instance(name, folder, env, accounts)
    result = subprocess.run(
        [sys.executable, str(BENCH / "seed.py"), "--out", str(instance.pools),
         "--accounts", str(accounts), "--refresh", str(refresh)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"seeding {name} failed:\n{result.stdout}\n{result.stderr}")
    instance.seed = json.loads(result.stdout.strip().splitlines()[-1])
    return instance


class Background(threading.Thread):
    """Run a setup step on a thread; join() re-raises what it raised."""

    def __init__(self, target: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self._target_fn, self.value, self.error = target, None, None

    def run(self) -> None:
        try:
            self.value = self._target_fn()
        except BaseException as error:  # handed to the caller by result()
            self.error = error

    def result(self) -> Any:
        self.join()
        if self.error is not None:
            raise self.error
        return self.value


def create_fastapi_users_venv(workdir: Path) -> Path:
    venv = workdir / "fastapi-users-venv"
    log = workdir / "fastapi-users-pip.log"
    python3 = shutil.which("python3") or sys.executable
    with open(log, "wb") as out:
        for command in (
            [python3, "-m", "venv", str(venv)],
            [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
             "--disable-pip-version-check", *FASTAPI_USERS_PACKAGES],
        ):
            if subprocess.run(command, stdout=out, stderr=out, timeout=600,
                              check=False).returncode != 0:
                raise SystemExit(f"setting up fastapi-users failed:\n{log.read_text()[-4000:]}")
    return venv / "bin" / "python"


def start_all(stack: ExitStack, specs: list[tuple[Any, ...]],
               kwargs: list[dict[str, Any]]) -> list[BenchServer]:
    """Start the servers at the same time; each is stopped when `stack` closes (all of them,
    if one fails to start)."""
    starting = [Background(lambda a=a, kw=kw: start_server(*a, **kw))
                for a, kw in zip(specs, kwargs, strict=True)]
    for thread in starting:
        thread.start()
    started, failure = [], None
    for thread in starting:
        try:
            started.append(thread.result())
        except BaseException as error:  # noqa: BLE001 (raised once the others are in `stack`)
            failure = failure or error
    for server in started:
        stack.callback(server.stop)
    if failure is not None:
        raise failure
    return started
