"""Load benchmark of svc-auth: every hot path, against floors and a peer, in one run.

    .venv/bin/python bench/run.py            # or: make bench (about 6-8 minutes)

Starts, on 127.0.0.1 only, every server of ours with the project's own gunicorn.conf.py, as it
ships (its workers, preloading and worker recycling; nothing changed for the benchmark):
  - bench/floor_app.py, a Flask app answering GET / with constant JSON (the floor);
  - bench/argon2_app.py, a Flask app whose only work is one argon2id verify with the service's
    production parameters (the bound the hash sets on login);
  - svc-auth three times, each on a fresh temporary instance folder and SQLite database, with
    SVC_ENV=production, rate limits off and the production argon2id parameters: the main one
    (1,000 accounts), and two for the scaling test (1,000 and 1,000,000 accounts), seeded by
    bench/seed.py;
  - fastapi-users (bench/fastapi_users_app.py), in a virtual environment of its own created
    under the temporary folder, with uvicorn workers.
Then runs wrk (--latency; an unrecorded warm-up, then the measured run) against each scenario,
and prints a markdown report, also written to bench/results/latest.md. See bench/README.md.

Exit status: 1 when a run had an unexpected status or a socket error (its numbers are not to be
trusted), 2 with --fail-on-miss when a target was missed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib import parse as urlparse
from urllib import request as urlrequest
from urllib.error import HTTPError, URLError

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from app.config import DEFAULTS  # noqa: E402  (the production argon2id parameters)

HOST = "127.0.0.1"
STARTUP_TIMEOUT = 60.0
GUNICORN_CONF = ROOT / "gunicorn.conf.py"  # as it ships
PEER_CONF = BENCH / "peer_gunicorn_conf.py"
PUBLIC_URL = "https://auth.bench.invalid"
SIGNUP_PASSWORD = "bench signup passphrase 9031"
FASTAPI_USERS_PACKAGES = ["fastapi-users[sqlalchemy]", "aiosqlite", "uvicorn[standard]",
                          "uvicorn-worker", "gunicorn"]

# Targets (issue 7, item 6)
VERIFY_RATIO_TARGET = 0.70
VERIFY_P99_TARGET_MS = 15.0
SATURATION_MAX_TARGET_MS = 100.0
LOGIN_RATIO_TARGET = 0.85
SCALING_TARGET = 0.10

STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[{time.monotonic() - STARTED:6.1f}s] {message}", file=sys.stderr, flush=True)


# Results -------------------------------------------------------------------------------------

@dataclass
class Result:
    name: str
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    requests: int
    ok: int
    bad: int
    last_bad: int
    socket_errors: int
    pool_next: int | None = None
    cpu_ms: float = 0.0  # the server's CPU time (all processes, all threads) per request
    drain_s: float = 0.0  # how long its background work went on after wrk stopped
    mails_run: int = 0  # mails written during the measured run
    mails_after: int = 0  # ... and after it, until the workers were idle
    runs: list[float] = field(default_factory=list)  # req/s of each run merged in
    max_ms: float = 0.0  # the slowest request of the run

    @property
    def clean(self) -> bool:
        return self.bad == 0 and self.socket_errors == 0 and self.ok > 0


def merge(first: Result, second: Result) -> Result:
    """Two runs of one scenario (ABBA order): the mean of their rates and percentiles."""
    total = first.requests + second.requests
    return Result(
        name=first.name,
        requests_per_s=(first.requests_per_s + second.requests_per_s) / 2,
        p50_ms=(first.p50_ms + second.p50_ms) / 2,
        p99_ms=(first.p99_ms + second.p99_ms) / 2,
        max_ms=max(first.max_ms, second.max_ms),
        requests=total, ok=first.ok + second.ok, bad=first.bad + second.bad,
        last_bad=first.last_bad or second.last_bad,
        socket_errors=first.socket_errors + second.socket_errors,
        cpu_ms=(first.cpu_ms * first.requests + second.cpu_ms * second.requests) / max(total, 1),
        runs=[*first.runs, *second.runs],
    )


_UNIT_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def _ms(text: str) -> float:
    match = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not match:
        raise ValueError(f"unexpected latency {text!r}")
    return float(match.group(1)) * _UNIT_MS[match.group(2)]


def parse_wrk(name: str, output: str) -> Result:
    def find(pattern: str) -> re.Match[str]:
        match = re.search(pattern, output, re.MULTILINE)
        if match is None:
            raise SystemExit(f"could not read {pattern!r} in wrk's output:\n{output}")
        return match

    socket_errors = 0
    if errors := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
                           output):
        socket_errors = sum(int(n) for n in errors.groups())
    status = find(r"^bench-status ok=(\d+) bad=(\d+) last_bad=(\d+)")
    pool = re.search(r"^bench-pool next=(\d+)", output, re.MULTILINE)
    return Result(
        name=name,
        requests_per_s=float(find(r"^Requests/sec:\s+([\d.]+)").group(1)),
        p50_ms=_ms(find(r"^\s+50%\s+(\S+)").group(1)),
        p99_ms=_ms(find(r"^\s+99%\s+(\S+)").group(1)),
        max_ms=_ms(find(r"^\s+Latency\s+\S+\s+\S+\s+(\S+)").group(1)),
        requests=int(find(r"^\s+(\d+) requests in").group(1)),
        ok=int(status.group(1)), bad=int(status.group(2)), last_bad=int(status.group(3)),
        socket_errors=socket_errors,
        pool_next=int(pool.group(1)) if pool else None,
    )


# HTTP and servers ------------------------------------------------------------------------------

def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def http(method: str, url: str, body: dict[str, Any] | None = None,
         headers: dict[str, str] | None = None, form: dict[str, str] | None = None,
         ) -> tuple[int, Any]:
    if form is not None:
        data: bytes | None = urlparse.urlencode(form).encode()
        content_type = "application/x-www-form-urlencoded"
    else:
        data = json.dumps(body).encode() if body is not None else None
        content_type = "application/json"
    req = urlrequest.Request(url, data=data, method=method,  # noqa: S310 (127.0.0.1 only)
                             headers={"Content-Type": content_type, **(headers or {})})
    try:
        with urlrequest.urlopen(req, timeout=30) as response:  # noqa: S310
            raw = response.read()
            status = response.status
    except HTTPError as error:
        with error:
            raw, status = error.read(), error.code
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        return status, raw.decode(errors="replace")


def _ticks() -> int:
    return os.sysconf("SC_CLK_TCK")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()  # fields from the 3rd (state) on


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields is not None and int(fields[1]) == pid:
                found.append(int(entry.name))
    return sorted(found)


def status_kib(pid: int, key: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Gunicorn:
    def __init__(self, name: str, app: str, cwd: Path, env: dict[str, str], workdir: Path,
                 workers: int | None, python: str = sys.executable, worker_class: str = "sync",
                 config: Path = GUNICORN_CONF) -> None:
        """`workers` None: as many as `config` says."""
        self.name = name
        self.port = free_port()
        self.base_url = f"http://{HOST}:{self.port}"
        self.log = workdir / f"{name}.log"
        env = {**env, "PROMETHEUS_MULTIPROC_DIR": str(workdir / f"metrics-{name}")}
        self.peak_rss_kib: dict[int, int] = {}
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [python, "-m", "gunicorn", "--config", str(config),
                 "--bind", f"{HOST}:{self.port}", "--worker-class", worker_class,
                 *(["--workers", str(workers)] if workers is not None else []), app],
                cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )

    def wait_until_up(self, path: str, expect: int = 200) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if http("GET", self.base_url + path)[0] == expect:
                    return
            except (URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        self.stop()
        raise SystemExit(f"{self.name} did not start:\n{self.log.read_text(errors='replace')}")

    def workers(self) -> list[int]:
        return children_of(self.process.pid)

    def cpu_seconds(self) -> float:
        """The CPU time of the master and its workers, including workers already recycled
        (the master's cutime and cstime: its children that exited and were waited for)."""
        total = 0
        master = _stat_fields(self.process.pid)
        if master is not None:
            total += sum(int(value) for value in master[11:15])  # utime, stime, cutime, cstime
        for pid in self.workers():
            fields = _stat_fields(pid)
            if fields is not None:
                total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / _ticks()

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
        for pid in self.workers():
            peak = status_kib(pid, "VmHWM")
            if peak is not None:
                self.peak_rss_kib[pid] = max(peak, self.peak_rss_kib.get(pid, 0))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.sample_rss()
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


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


# wrk -------------------------------------------------------------------------------------------

@dataclass
class Scenario:
    key: str
    name: str
    server: Gunicorn
    path: str
    script: str
    env: dict[str, str] = field(default_factory=dict)
    expect: int = 200
    pool_once: bool = False
    offset: int = 0  # a BENCH_POOL_ONCE pool: the first line not used yet
    # Work that goes on after the answer (mail jobs on the outbox thread): wait for the
    # workers to be idle after the warm-up and after the run, and count that CPU time too.
    background: bool = False
    mail_dir: Path | None = None


def run_wrk(scenario: Scenario, args: argparse.Namespace, duration: int) -> tuple[Result, str]:
    env = {**os.environ, "BENCH_DIR": str(BENCH), "BENCH_THREADS": str(args.threads),
           "BENCH_EXPECT": str(scenario.expect), "BENCH_RUN_ID": secrets.token_hex(4),
           **scenario.env}
    if scenario.pool_once:
        env["BENCH_POOL_ONCE"], env["BENCH_POOL_OFFSET"] = "1", str(scenario.offset)
    command = ["wrk", "--threads", str(args.threads), "--connections", str(args.connections),
               "--duration", f"{duration}s", "--timeout", "10s", "--latency",
               "--script", str(BENCH / scenario.script), scenario.server.base_url + scenario.path]
    result = subprocess.run(command, env=env, capture_output=True, text=True,
                            timeout=duration + 60, check=False)
    if result.returncode != 0:
        raise SystemExit(f"wrk failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    parsed = parse_wrk(scenario.name, result.stdout)
    if scenario.pool_once and parsed.pool_next is not None:
        scenario.offset = parsed.pool_next
    return parsed, result.stdout


def count_mails(folder: Path | None) -> int:
    return len(list(folder.glob("*.eml"))) if folder is not None and folder.exists() else 0


def measure(scenario: Scenario, args: argparse.Namespace, *, warmup: bool = True,
            duration: int | None = None) -> Result:
    """An unrecorded warm-up (unless told not to), then the measured run."""
    server = scenario.server
    progress(f"wrk: {scenario.name} ({server.base_url}{scenario.path})")
    warm: Result | None = None
    if warmup and args.warmup:
        warm, _raw = run_wrk(scenario, args, args.warmup)
        if scenario.background:
            server.wait_idle(args.drain_cap)
    mails_start, cpu_start = count_mails(scenario.mail_dir), server.cpu_seconds()
    result, raw = run_wrk(scenario, args, duration or args.duration)
    mails_stop = count_mails(scenario.mail_dir)
    if scenario.background:
        result.drain_s = server.wait_idle(args.drain_cap)
    result.cpu_ms = (server.cpu_seconds() - cpu_start) * 1000 / max(result.requests, 1)
    result.mails_run = mails_stop - mails_start
    result.mails_after = count_mails(scenario.mail_dir) - mails_stop
    result.runs = [result.requests_per_s]
    print(f"--- {scenario.name}\n{raw}", file=sys.stderr)
    server.sample_rss()
    if warm is not None and not warm.clean:  # an error in the warm-up flags the scenario too
        result.bad += warm.bad
        result.last_bad = result.last_bad or warm.last_bad
        result.socket_errors += warm.socket_errors
    return result


def measure_abba(a: Scenario, b: Scenario, args: argparse.Namespace) -> tuple[Result, Result]:
    """A, B, B, A: two runs of each, in an order that cancels a steady drift of the machine."""
    first_a, first_b = measure(a, args), measure(b, args)
    second_b, second_a = measure(b, args, warmup=False), measure(a, args, warmup=False)
    return merge(first_a, second_a), merge(first_b, second_b)


# Report ----------------------------------------------------------------------------------------

def pct(new: float, old: float) -> float:
    return new / old - 1


def fmt_row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def mark(ok: bool) -> str:
    return "ok" if ok else "**MISSED**"


def scenarios_with_background(key: str) -> bool:
    return key in ("signup", "forgot_unknown", "forgot_known")


def rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def result_cells(r: Result) -> list[str]:
    """req/s, p50, p99, server CPU per request, unexpected statuses / socket errors."""
    return [rate(r.requests_per_s) + (" (" + " / ".join(rate(x) for x in r.runs) + ")"
                                      if len(r.runs) > 1 else ""),
            f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}", f"{r.cpu_ms:.2f}",
            f"{r.bad} / {r.socket_errors}"]


HEAD = "| scenario | req/s | p50 ms | p99 ms | server CPU ms / request | bad / socket errors |"
RULE = "|---|---:|---:|---:|---:|---:|"


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def check(self, ok: bool, what: str) -> str:
        if not ok:
            self.missed.append(what)
        return mark(ok)

    def seen(self, *results: Result) -> None:
        for r in results:
            if not r.clean:
                self.invalid.append(f"{r.name}: {r.bad} unexpected statuses (last {r.last_bad}),"
                                    f" {r.socket_errors} socket errors")


def versions() -> dict[str, str]:
    found = {}
    for package in ("flask", "werkzeug", "gunicorn", "sqlalchemy", "pyjwt", "cryptography",
                    "argon2-cffi", "pydantic"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "?"
    wrk = subprocess.run(["wrk", "--version"], capture_output=True, text=True, check=False)
    found["wrk"] = (wrk.stdout + wrk.stderr).split("Copyright")[0].removeprefix("wrk").strip()
    found["sqlite"] = sqlite3.sqlite_version
    return found


def peer_versions(python: Path) -> dict[str, str]:
    code = ("import importlib.metadata as m, json; print(json.dumps({p: m.version(p) for p in "
            "('fastapi-users', 'fastapi', 'starlette', 'uvicorn', 'uvicorn-worker', 'pwdlib', "
            "'argon2-cffi', 'bcrypt', 'sqlalchemy', 'aiosqlite', 'pyjwt', 'gunicorn')}))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return json.loads(out.stdout) if out.returncode == 0 else {}


def peer_hashers(python: Path) -> str:
    code = ("from fastapi_users.password import PasswordHelper; h = PasswordHelper().password_hash;"
            "print(', '.join(type(x).__name__ for x in h.hashers))")
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return out.stdout.strip() or "?"


# Main ------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="measured seconds per scenario")
    parser.add_argument("--warmup", type=int, default=2, help="unrecorded seconds first")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None,
                        help="default: as gunicorn.conf.py says (it ships with one per core)")
    parser.add_argument("--saturation", type=int, default=60,
                        help="seconds of the saturation run (verify, the slowest request)")
    parser.add_argument("--accounts", type=int, default=1_000, help="main and small databases")
    parser.add_argument("--large-accounts", type=int, default=1_000_000)
    parser.add_argument("--refresh-tokens", type=int, default=10_000,
                        help="refresh tokens created for the refresh scenario (each used once)")
    parser.add_argument("--drain-cap", type=float, default=45.0,
                        help="longest wait for the service's background mail work to finish")
    parser.add_argument("--skip-peer", action="store_true", help="leave fastapi-users out")
    parser.add_argument("--fail-on-miss", action="store_true",
                        help="exit 2 when a target is missed")
    parser.add_argument("--output", type=Path, default=BENCH / "results" / "latest.md")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: run scripts/install-bench-tools")
    load_before = os.getloadavg()
    began = datetime.now(UTC)
    argon2 = {"m": int(DEFAULTS["ARGON2_MEMORY_COST"]), "t": int(DEFAULTS["ARGON2_TIME_COST"]),
              "p": int(DEFAULTS["ARGON2_PARALLELISM"])}
    results: dict[str, Result] = {}
    notes: dict[str, Any] = {}

    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="svc-bench-")))
        servers: list[Gunicorn] = []

        def start(*server_args: Any, **server_kwargs: Any) -> Gunicorn:
            server = Gunicorn(*server_args, **server_kwargs)
            stack.callback(server.stop)
            servers.append(server)
            return server

        # Set-up: fastapi-users' environment installs while the databases are seeded.
        progress("set-up: migrating a template database, creating fastapi-users' venv")
        peer_venv = None if args.skip_peer else Background(
            lambda: create_fastapi_users_venv(workdir))
        if peer_venv is not None:
            peer_venv.start()
        template = migrate_template(workdir)
        large = Background(lambda: prepare_instance("large", workdir, template,
                                                    args.large_accounts, 0))
        large.start()
        small_setup = Background(lambda: prepare_instance("small", workdir, template,
                                                          args.accounts, 0))
        small_setup.start()
        progress("set-up: seeding the databases, opening sessions")
        main_instance = prepare_instance("main", workdir, template, args.accounts,
                                         args.refresh_tokens)
        small: Instance = small_setup.result()
        large_instance: Instance = large.result()
        notes["seed"] = {i.name: i.seed for i in (main_instance, small, large_instance)}
        progress(f"set-up: {args.large_accounts:,} accounts seeded in "
                 f"{large_instance.seed['seed_seconds']:.1f} s")

        floor = start("floor", "floor_app:app", BENCH, clean_env(), workdir, args.workers)
        bound_env = {**clean_env(), "BENCH_ARGON2_MEMORY_COST": str(argon2["m"]),
                     "BENCH_ARGON2_TIME_COST": str(argon2["t"]),
                     "BENCH_ARGON2_PARALLELISM": str(argon2["p"]),
                     "BENCH_ARGON2_PASSWORD": main_instance.seed["password"]}
        bound = start("argon2", "argon2_app:app", BENCH, bound_env, workdir, args.workers)
        service = start("service", "wsgi:app", ROOT, main_instance.env, workdir, args.workers)
        service_small = start("service-small", "wsgi:app", ROOT, small.env, workdir,
                              args.workers)
        service_large = start("service-large", "wsgi:app", ROOT, large_instance.env, workdir,
                              args.workers)
        floor.wait_until_up("/")
        bound.wait_until_up("/", expect=405)
        for server in (service, service_small, service_large):
            server.wait_until_up("/health")
        peer_python = peer_venv.result() if peer_venv is not None else None
        progress("set-up done: servers up")

        # Smoke checks: each kind of request answers as the scenarios expect.
        password = main_instance.seed["password"]
        emails = (main_instance.pools / "emails.txt").read_text().split()
        status, body = http("POST", service.base_url + "/api/v2/auth/login",
                            {"email": emails[0], "password": password})
        if status != 200:
            raise SystemExit(f"login failed: {status} {body}")
        token = main_instance.first_access_token()
        status, body = http("GET", service.base_url + "/api/v2/auth/verify",
                            headers={"Authorization": f"Bearer {token}"})
        if status != 200:
            raise SystemExit(f"verify failed: {status} {body}")
        unknown = workdir / "unknown-emails.txt"
        unknown.write_text("".join(f"nobody{n:04d}@bench.example.com\n" for n in range(200)))

        login_body = '{"email":"%s","password":"' + password + '"}'
        json_post = {"BENCH_METHOD": "POST", "BENCH_CONTENT_TYPE": "application/json"}

        def pool(file: Path, **extra: str) -> dict[str, str]:
            return {"BENCH_POOL_FILE": str(file), **extra}

        def verify_pool(instance: Instance) -> dict[str, str]:
            return pool(instance.pools / "access.txt", BENCH_POOL_BEARER="1")

        def login_pool(instance: Instance) -> dict[str, str]:
            return {**json_post, **pool(instance.pools / "emails.txt",
                                        BENCH_POOL_BODY=login_body)}

        S = Scenario
        mail = {"mail_dir": main_instance.mail}
        refresh_pool = main_instance.pools / "refresh.txt"
        floor_run = S("floor", "floor: Flask, constant JSON (GET /)", floor, "/", "static.lua")
        bound_run = S("bound", "bound: Flask, one argon2id verify (POST /)", bound, "/",
                      "static.lua", {**json_post, "BENCH_BODY": json.dumps(
                          {"email": emails[0], "password": password})})
        login_run = S("login", "POST /api/v2/auth/login, 200 accounts", service,
                      "/api/v2/auth/login", "pool.lua", login_pool(main_instance))
        others = [
            S("refresh", "POST /api/v2/auth/refresh, each token once", service,
              "/api/v2/auth/refresh", "pool.lua",
              {**json_post, **pool(refresh_pool, BENCH_POOL_BODY='{"refresh_token":"%s"}')},
              pool_once=True),
            S("signup", "POST /api/v2/auth/signup, a new email each", service,
              "/api/v2/auth/signup", "signup.lua", {"BENCH_PASSWORD": SIGNUP_PASSWORD},
              expect=201, background=True, **mail),
            S("login_page", "GET /login (hosted page)", service, "/login", "static.lua"),
            S("forgot_unknown", "POST /api/v2/auth/forgot-password, unknown emails", service,
              "/api/v2/auth/forgot-password", "pool.lua",
              {**json_post, **pool(unknown, BENCH_POOL_BODY='{"email":"%s"}')}, expect=202,
              background=True, **mail),
            S("forgot_known", "POST /api/v2/auth/forgot-password, existing emails", service,
              "/api/v2/auth/forgot-password", "pool.lua",
              {**json_post, **pool(main_instance.pools / "emails.txt",
                                   BENCH_POOL_BODY='{"email":"%s"}')}, expect=202,
              background=True, **mail),
        ]
        results["floor"] = measure(floor_run, args)
        for scenario in (
            S("service_const", "svc-auth's own constant JSON (GET /.well-known/openid-"
              "configuration)", service, "/.well-known/openid-configuration", "static.lua"),
            S("verify", "GET /api/v2/auth/verify, one token", service, "/api/v2/auth/verify",
              "static.lua", {"BENCH_AUTHORIZATION": f"Bearer {token}"}),
            S("verify_pool", "GET /api/v2/auth/verify, 200 tokens of 200 sessions", service,
              "/api/v2/auth/verify", "pool.lua", verify_pool(main_instance)),
        ):
            results[scenario.key] = measure(scenario, args)
        # Saturation, long enough for workers to be recycled (gunicorn.conf.py's max_requests):
        # the slowest request of the run, and how many workers started during it.
        booted = service.log.read_text(errors="replace").count("Booting worker")
        results["saturation"] = measure(
            S("saturation", f"GET /api/v2/auth/verify, 200 tokens, {args.saturation} s at "
              "saturation", service, "/api/v2/auth/verify", "pool.lua",
              verify_pool(main_instance)), args, warmup=False, duration=args.saturation)
        notes["recycled"] = service.log.read_text(errors="replace").count("Booting worker") - booted
        service.wait_idle(args.drain_cap)
        results["bound"], results["login"] = measure_abba(bound_run, login_run, args)
        for scenario in others:
            service.wait_idle(args.drain_cap)
            results[scenario.key] = measure(scenario, args)
        notes["refresh_pool"] = (others[0].offset, args.refresh_tokens)
        service.stop()  # its outbox may still be busy; the rest of the run must not share a CPU

        # Scaling: the same requests on 1,000 and 1,000,000 accounts, ABBA.
        for what, small_env, large_env in (
            ("verify", verify_pool(small), verify_pool(large_instance)),
            ("login", login_pool(small), login_pool(large_instance)),
        ):
            path = f"/api/v2/auth/{what}"
            service_small.wait_idle(args.drain_cap)
            service_large.wait_idle(args.drain_cap)
            results[f"{what}_small"], results[f"{what}_large"] = measure_abba(
                S(f"{what}_small", f"{what}, {args.accounts:,} accounts", service_small, path,
                  "pool.lua", small_env),
                S(f"{what}_large", f"{what}, {args.large_accounts:,} accounts", service_large,
                  path, "pool.lua", large_env),
                args)
        service_small.stop()
        service_large.stop()

        # fastapi-users, same machine, same wrk settings.
        if peer_python is not None:
            peer_db = workdir / "fastapi-users.db"
            peer_env = {**clean_env(), "BENCH_FASTAPI_USERS_DB": str(peer_db),
                        "BENCH_FASTAPI_USERS_SECRET": secrets.token_urlsafe(32)}
            subprocess.run([str(peer_python), str(BENCH / "fastapi_users_app.py")], cwd=BENCH,
                           env=peer_env, check=True, timeout=120)
            peer = start("fastapi-users", "fastapi_users_app:app", BENCH, peer_env, workdir,
                         args.workers, python=str(peer_python),
                         worker_class="uvicorn_worker.UvicornWorker", config=PEER_CONF)
            peer.wait_until_up("/docs")
            peer_email = "peer@bench.example.com"
            status, body = http("POST", peer.base_url + "/auth/register",
                                {"email": peer_email, "password": password})
            if status != 201:
                raise SystemExit(f"fastapi-users register failed: {status} {body}")
            login_form = {"username": peer_email, "password": password}
            status, body = http("POST", peer.base_url + "/auth/jwt/login", form=login_form)
            if status != 200:
                raise SystemExit(f"fastapi-users login failed: {status} {body}")
            peer_token = body["access_token"]
            with closing(sqlite3.connect(peer_db)) as connection:
                peer_hash = connection.execute('SELECT hashed_password FROM "user"').fetchone()[0]
            notes["peer"] = {"hash": peer_hash.rsplit("$", 2)[0], "hashers": peer_hashers(
                peer_python), "versions": peer_versions(peer_python)}
            for scenario in (
                S("peer_login", "fastapi-users POST /auth/jwt/login (form)", peer,
                  "/auth/jwt/login", "static.lua",
                  {"BENCH_METHOD": "POST",
                   "BENCH_CONTENT_TYPE": "application/x-www-form-urlencoded",
                   "BENCH_BODY": urlparse.urlencode(login_form)}),
                S("peer_me", "fastapi-users GET /users/me, one token", peer, "/users/me",
                  "static.lua", {"BENCH_AUTHORIZATION": f"Bearer {peer_token}"}),
            ):
                results[scenario.key] = measure(scenario, args)
            peer.stop()

        # The floor again: how much the machine drifted during the run.
        results["floor_end"] = measure(
            S("floor_end", "floor again, at the end", floor, "/", "static.lua"), args)
        for server in servers:
            server.sample_rss()
        notes["rss"] = {s.name: max(s.peak_rss_kib.values(), default=0) for s in servers}

    notes["load_after"] = os.getloadavg()
    report = build_report(results, notes, args, argon2, load_before, began)
    text = "\n".join(report.lines) + "\n"
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    progress("done")
    if report.invalid:
        return 1
    return 2 if report.missed and args.fail_on_miss else 0


def build_report(results: dict[str, Result], notes: dict[str, Any],
                 args: argparse.Namespace, argon2: dict[str, int],
                 load_before: tuple[float, ...], began: datetime) -> Report:
    rep = Report()
    rep.seen(*results.values())
    v = versions()
    load_after = notes["load_after"]
    minutes = (time.monotonic() - STARTED) / 60
    small, large = f"{args.accounts:,}", f"{args.large_accounts:,}"
    rep.add(
        f"# svc-auth benchmark, {began.strftime('%Y-%m-%d %H:%M UTC')}",
        "",
        "## Machine and settings",
        "",
        f"- {os.cpu_count()} CPUs ({platform.machine()}), {_mem_gib():.0f} GiB; load average "
        f"(1/5/15 min) before the run {load_before[0]:.2f} / {load_before[1]:.2f} / "
        f"{load_before[2]:.2f}, after {load_after[0]:.2f} / {load_after[1]:.2f} / "
        f"{load_after[2]:.2f}; the whole run took {minutes:.1f} min. The machine is shared and "
        "noisy: trust ratios within one run, not absolute numbers across runs.",
        f"- Python {platform.python_version()}, "
        + ", ".join(f"{k} {val}" for k, val in v.items()) + ".",
        f"- Every server of ours: gunicorn on 127.0.0.1 with the project's gunicorn.conf.py as it "
        f"ships ({args.workers or 'its'} workers, the app preloaded, workers recycled after "
        "20,000-30,000 requests, access log included); fastapi-users with the same values "
        "and uvicorn workers (`bench/peer_gunicorn_conf.py`).",
        "- svc-auth: SVC_ENV=production, SQLite (WAL) in a fresh temporary folder, rate limits "
        f"off, mail to files, argon2id m={argon2['m']} KiB, t={argon2['t']}, p={argon2['p']} "
        "(the production defaults, no SVC_ARGON2_* override), ES256 access tokens.",
        f"- wrk: {args.threads} threads, {args.connections} connections, {args.warmup} s "
        f"unrecorded warm-up then {args.duration} s measured, per scenario. Where two rates are "
        "in brackets the scenario ran twice in ABBA order against the one it is compared with "
        "(A, B, B, A: a steady drift of the machine cancels out) and the figures are the means.",
        "- Server CPU per request: the CPU time of the server's processes (every thread, so "
        "background mail jobs too) during the measured run, divided by the requests answered; "
        "less sensitive to the machine's other load than requests per second.",
        "",
    )

    # 1. verify vs floor
    floor = results["floor"]
    rep.add("## 1. Verify against the floor",
            "",
            f"Target: at least {VERIFY_RATIO_TARGET:.2f} of the floor's requests per second, "
            f"p99 at most {VERIFY_P99_TARGET_MS:.0f} ms, at {args.connections} connections.",
            "",
            HEAD.removesuffix(" |") + " | ratio to floor | by CPU | target |",
            RULE + "---:|---:|---|",
            fmt_row([floor.name, *result_cells(floor), "1.000", "1.000", ""]))
    const = results["service_const"]
    rep.add(fmt_row([const.name, *result_cells(const),
                     f"{const.requests_per_s / floor.requests_per_s:.3f}",
                     f"{floor.cpu_ms / const.cpu_ms if const.cpu_ms else 0.0:.3f}",
                     "(no target: the service's fixed cost per request)"]))
    for key in ("verify", "verify_pool"):
        r = results[key]
        ratio = r.requests_per_s / floor.requests_per_s
        by_cpu = floor.cpu_ms / r.cpu_ms if r.cpu_ms else 0.0
        verdict = (rep.check(ratio >= VERIFY_RATIO_TARGET,
                             f"{r.name}: {ratio:.2f} of the floor's req/s (target "
                             f"{VERIFY_RATIO_TARGET:.2f})") + " ratio, "
                   + rep.check(r.p99_ms <= VERIFY_P99_TARGET_MS,
                               f"{r.name}: p99 {r.p99_ms:.1f} ms (target "
                               f"{VERIFY_P99_TARGET_MS:.0f} ms)") + " p99")
        rep.add(fmt_row([r.name, *result_cells(r), f"{ratio:.3f}", f"{by_cpu:.3f}", verdict]))
    rep.add("",
            "\"By CPU\" is the floor's CPU time per request over the endpoint's: the ratio the "
            "two would reach on an otherwise idle machine if the CPU were the only limit. The "
            "target is judged on requests per second. The service's constant JSON (same "
            "middleware, hooks and headers as verify, no token and no database) splits verify's "
            "gap into the service's fixed cost per request and verify's own work.",
            "")

    saturation = results["saturation"]
    rep.add("### Saturation",
            "",
            f"Target: no request over {SATURATION_MAX_TARGET_MS:.0f} ms in {args.saturation} s at "
            f"saturation ({args.connections} connections), with the shipped worker recycling.",
            "",
            "| run | req/s | p99 ms | slowest ms | workers started during the run | target |",
            "|---|---:|---:|---:|---:|---|",
            fmt_row([saturation.name, rate(saturation.requests_per_s),
                     f"{saturation.p99_ms:.1f}", f"{saturation.max_ms:.1f}",
                     str(notes.get("recycled", 0)),
                     rep.check(saturation.max_ms <= SATURATION_MAX_TARGET_MS,
                               f"{saturation.name}: slowest {saturation.max_ms:.1f} ms (target "
                               f"{SATURATION_MAX_TARGET_MS:.0f} ms)")]),
            "")

    # 2. login vs the argon2 bound
    bound, login = results["bound"], results["login"]
    ratio = login.requests_per_s / bound.requests_per_s
    rep.add("## 2. Login against the bound the hash sets",
            "",
            f"Target: at least {LOGIN_RATIO_TARGET:.2f} of the requests per second of a Flask "
            "endpoint (bench/argon2_app.py) that only verifies one argon2id hash with the same "
            f"parameters (argon2-cffi's PasswordHasher, m={argon2['m']}, t={argon2['t']}, "
            f"p={argon2['p']}). Login rotates 200 accounts.",
            "",
            HEAD.removesuffix(" |") + " | ratio to bound | by CPU | target |",
            RULE + "---:|---:|---|",
            fmt_row([bound.name, *result_cells(bound), "1.000", "1.000", ""]),
            fmt_row([login.name, *result_cells(login), f"{ratio:.3f}",
                     f"{bound.cpu_ms / login.cpu_ms if login.cpu_ms else 0.0:.3f}",
                     rep.check(ratio >= LOGIN_RATIO_TARGET,
                               f"login: {ratio:.2f} of the argon2 bound's req/s (target "
                               f"{LOGIN_RATIO_TARGET:.2f})")]),
            "")

    # 3. the other endpoints
    rep.add("## 3. Refresh, signup, forgot-password, the hosted login page",
            "",
            HEAD.removesuffix(" |") + " | background work after wrk stopped |",
            RULE + "---|")
    for key in ("refresh", "signup", "login_page", "forgot_unknown", "forgot_known"):
        r = results[key]
        background = ""
        if scenarios_with_background(key):
            background = (f"**still busy after {r.drain_s:.0f} s**" if r.drain_s >= args.drain_cap
                          else f"busy {r.drain_s:.1f} s more")
        if r.mails_run or r.mails_after:
            background += (f"; mails written: {r.mails_run:,} during the run, "
                           f"{r.mails_after:,} after")
        rep.add(fmt_row([r.name, *result_cells(r), background]))
    used, created = notes["refresh_pool"]
    rep.add("",
            f"Refresh sent {used:,} of {created:,} pre-made refresh tokens (sessions opened by "
            "bench/seed.py with sessions.sign_in), each once: every request is a real rotation, "
            "none a grace-window answer.")
    if used > created:
        rep.add(f"**The refresh pool ran out** ({used - created:,} requests past its end were "
                "sent an invalid token): rerun with a larger --refresh-tokens.")
        rep.missed.append("refresh: the pool of refresh tokens ran out")
    rep.add("Signup hashes a new password (argon2id), writes the account and a session, and "
            "queues a confirmation mail. Forgot-password answers at once and hands the lookup, "
            "the token and the mail to the worker's outbox thread, which goes on after wrk stops "
            "(the last column; its CPU time is counted in the CPU per request).",
            "")

    # 4. scaling
    seed = notes["seed"]
    rep.add(f"## 4. From {small} to {large} accounts",
            "",
            f"Target: login and verify latency within ±{SCALING_TARGET:.0%}. Two fresh databases "
            "seeded the same way (one precomputed hash); verify rotates 200 tokens of 200 "
            "sessions, login 200 accounts spread over the table; ABBA order, means of two runs.",
            "",
            "| endpoint | req/s small / large | p50 ms small / large | p50 change | p99 ms small /"
            " large | p99 change | CPU ms / request small / large | CPU change | target |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for what in ("verify", "login"):
        a, b = results[f"{what}_small"], results[f"{what}_large"]
        d50, d99 = pct(b.p50_ms, a.p50_ms), pct(b.p99_ms, a.p99_ms)
        verdict = (rep.check(abs(d50) <= SCALING_TARGET,
                             f"{what}: p50 changes {d50:+.1%} from {small} to {large} accounts")
                   + " p50, "
                   + rep.check(abs(d99) <= SCALING_TARGET,
                               f"{what}: p99 changes {d99:+.1%} from {small} to {large} accounts")
                   + " p99")
        rep.add(fmt_row([what, f"{rate(a.requests_per_s)} / {rate(b.requests_per_s)}",
                         f"{a.p50_ms:.2f} / {b.p50_ms:.2f}", f"{d50:+.1%}",
                         f"{a.p99_ms:.2f} / {b.p99_ms:.2f}", f"{d99:+.1%}",
                         f"{a.cpu_ms:.2f} / {b.cpu_ms:.2f}",
                         f"{pct(b.cpu_ms, a.cpu_ms) if a.cpu_ms else 0.0:+.1%}", verdict]))
    rep.add("",
            "The target is judged on latency. On a shared machine, latency moves with the other "
            "load as much as with the table's size; the CPU time per request does not, so a "
            "missed latency target with a flat CPU change points at the machine, not the service.",
            "",
            f"Seeding {large} accounts took {seed['large']['seed_seconds']:.1f} s (sqlite3 "
            f"executemany in batches of 50,000, one hash: `{seed['large']['hash_prefix']}`); "
            f"{small} took {seed['small']['seed_seconds']:.2f} s. The main database's "
            f"{seed['main']['sessions']:,} sessions took {seed['main']['session_seconds']:.1f} s "
            "through sessions.sign_in.",
            "")

    # 5. RSS
    rep.add("## 5. Peak memory of one worker",
            "",
            "VmHWM of each worker (the children of each gunicorn master), sampled after every "
            "scenario and at shutdown; the largest worker of each server.",
            "",
            "| server | what it ran | peak RSS of one worker |",
            "|---|---|---:|")
    ran = {"floor": "the floor", "argon2": "the argon2 bound",
           "service": "svc-auth: every scenario of sections 1-3",
           "service-small": f"svc-auth, {small} accounts: section 4",
           "service-large": f"svc-auth, {large} accounts: section 4",
           "fastapi-users": "fastapi-users: section 6"}
    for name, kib in notes["rss"].items():
        rep.add(fmt_row([name, ran.get(name, ""), f"{kib / 1024:.1f} MiB"]))
    rep.add("")

    # 6. fastapi-users
    if "peer_me" in results:
        peer = notes["peer"]
        me, plogin = results["peer_me"], results["peer_login"]
        rep.add("## 6. The same workload against fastapi-users",
                "",
                ", ".join(f"{k} {val}" for k, val in peer["versions"].items())
                + "; set up as its documentation's full example (SQLAlchemy adapter on SQLite "
                "through aiosqlite, BearerTransport + JWTStrategy: HS256, 1 h), under gunicorn "
                f"with uvicorn workers ({args.workers}). Its password hash is its own default, "
                f"pwdlib's PasswordHash({peer['hashers']}): stored as `{peer['hash']}` "
                "(argon2-cffi's default profile), against our "
                f"`$argon2id$v=19$m={argon2['m']},t={argon2['t']},p={argon2['p']}`, so each of "
                "its logins hashes with more memory and time than ours. Its /users/me reads the "
                "user from the database on every call, as our verify reads the session.",
                "",
                HEAD,
                RULE,
                fmt_row([plogin.name, *result_cells(plogin)]),
                fmt_row([me.name, *result_cells(me)]),
                "",
                "| comparison | ratio of req/s, ours / theirs |",
                "|---|---:|",
                fmt_row(["our verify (one token) / its GET /users/me (one token)",
                         f"{results['verify'].requests_per_s / me.requests_per_s:.2f}"]),
                fmt_row(["our verify (200 tokens) / its GET /users/me (one token)",
                         f"{results['verify_pool'].requests_per_s / me.requests_per_s:.2f}"]),
                fmt_row(["our login / its login",
                         f"{results['login'].requests_per_s / plogin.requests_per_s:.2f}"]),
                "")

    # Drift and verdict
    end = results["floor_end"]
    rep.add("## Noise",
            "",
            f"The floor at the start: {floor.requests_per_s:,.0f} req/s, "
            f"{floor.cpu_ms:.2f} ms CPU / request; at the end: {end.requests_per_s:,.0f} req/s "
            f"({pct(end.requests_per_s, floor.requests_per_s):+.1%}), {end.cpu_ms:.2f} ms. A large "
            "change means the machine's other load moved during the run.",
            "",
            "## Verdict",
            "")
    if rep.invalid:
        rep.add("**FLAGGED: runs with unexpected statuses or socket errors; do not trust their "
                "numbers:**", "", *[f"- {line}" for line in rep.invalid], "")
    else:
        rep.add("Every response had its expected status (200; 201 for signup, 202 for "
                "forgot-password); no socket errors.", "")
    if rep.missed:
        rep.add("**Targets missed:**", "", *[f"- {line}" for line in rep.missed])
    else:
        rep.add("Every target met.")
    return rep


def _mem_gib() -> float:
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
    except (OSError, ValueError, IndexError):
        return 0.0
    return kib / 1024 / 1024


if __name__ == "__main__":
    raise SystemExit(main())
