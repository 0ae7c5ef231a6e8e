"""Load benchmark of svc-auth's verify and login, measured against a constant-JSON Flask floor.

    .venv/bin/python bench/run.py            # or: make bench

Starts, on 127.0.0.1 only and with the same gunicorn settings (sync workers, 2 of them):
  - the service, on a fresh temporary instance folder and SQLite database, with rate limits off
    and the production argon2id parameters (no SVC_ARGON2_* override);
  - bench/floor_app.py, a Flask app answering GET / with {"status": "ok"}.
Then signs a user up, logs in for an access token, and runs wrk (--latency) against the floor,
GET /api/v2/auth/verify and POST /api/v2/auth/login. Prints a markdown table and writes it to
bench/results/latest.md. Any response other than 200, or any socket error, flags the run.
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
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, closing
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib import request as urlrequest
from urllib.error import HTTPError, URLError

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

from app.config import DEFAULTS  # noqa: E402  (the production argon2id parameters, for the record)

HOST = "127.0.0.1"
STARTUP_TIMEOUT = 30.0


@dataclass(frozen=True)
class Scenario:
    name: str
    url: str
    script: str


@dataclass(frozen=True)
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

    @property
    def clean(self) -> bool:
        return self.bad == 0 and self.socket_errors == 0 and self.ok > 0


# Servers -------------------------------------------------------------------------------------

def free_port() -> int:
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def http(method: str, url: str, body: dict[str, Any] | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    req = urlrequest.Request(url, data=data, method=method, headers=all_headers)  # noqa: S310
    try:
        with urlrequest.urlopen(req, timeout=30) as response:  # noqa: S310 (127.0.0.1 only)
            return response.status, json.loads(response.read() or b"null")
    except HTTPError as error:
        with error:
            return error.code, json.loads(error.read() or b"null")


class Gunicorn:
    def __init__(self, name: str, app: str, cwd: Path, env: dict[str, str], workdir: Path,
                 workers: int) -> None:
        self.name = name
        self.port = free_port()
        self.base_url = f"http://{HOST}:{self.port}"
        self.log = workdir / f"{name}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--bind", f"{HOST}:{self.port}",
                 "--workers", str(workers), "--worker-class", "sync", "--no-control-socket",
                 "--log-level", "warning", app],
                cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
            )

    def wait_until_up(self, path: str) -> None:
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if http("GET", self.base_url + path)[0] == 200:
                    return
            except (URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        self.stop()
        raise SystemExit(f"{self.name} did not start:\n{self.log.read_text(errors='replace')}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def service_env(workdir: Path) -> dict[str, str]:
    instance = workdir / "instance"
    instance.mkdir()
    # Nothing inherited from the caller's SVC_* settings: in particular no SVC_ARGON2_*.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SVC_")}
    env.update({
        "SVC_INSTANCE_PATH": str(instance),
        "SVC_DATABASE_URL": f"sqlite:///{instance / 'svc-auth.db'}",
        "SVC_RATELIMIT_ENABLED": "false",
        "SVC_SECRET_KEY": secrets.token_urlsafe(32),
    })
    return env


def migrate(env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", "db", "upgrade"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"flask db upgrade failed:\n{result.stderr}")


# wrk -------------------------------------------------------------------------------------------

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
    return Result(
        name=name,
        requests_per_s=float(find(r"^Requests/sec:\s+([\d.]+)").group(1)),
        p50_ms=_ms(find(r"^\s+50%\s+(\S+)").group(1)),
        p99_ms=_ms(find(r"^\s+99%\s+(\S+)").group(1)),
        requests=int(find(r"^\s+(\d+) requests in").group(1)),
        ok=int(status.group(1)), bad=int(status.group(2)), last_bad=int(status.group(3)),
        socket_errors=socket_errors,
    )


def run_wrk(scenario: Scenario, args: argparse.Namespace, env: dict[str, str],
            duration: int) -> tuple[Result, str]:
    command = ["wrk", "--threads", str(args.threads), "--connections", str(args.connections),
               "--duration", f"{duration}s", "--timeout", "10s", "--latency",
               "--script", str(BENCH / scenario.script), scenario.url]
    result = subprocess.run(command, env=env, capture_output=True, text=True,
                            timeout=duration + 60, check=False)
    if result.returncode != 0:
        raise SystemExit(f"wrk failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return parse_wrk(scenario.name, result.stdout), result.stdout


# Report ----------------------------------------------------------------------------------------

def table(results: list[Result]) -> str:
    floor = results[0].requests_per_s
    lines = ["| endpoint | req/s | p50 ms | p99 ms | ratio to floor | non-200 / socket errors |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {r.name} | {r.requests_per_s:,.0f} | {r.p50_ms:.2f} | {r.p99_ms:.2f} | "
                     f"{r.requests_per_s / floor:.3f} | {r.bad} / {r.socket_errors} |")
    return "\n".join(lines)


def report(results: list[Result], args: argparse.Namespace, load: tuple[float, ...]) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    argon2 = (f"m={DEFAULTS['ARGON2_MEMORY_COST']} KiB, t={DEFAULTS['ARGON2_TIME_COST']}, "
              f"p={DEFAULTS['ARGON2_PARALLELISM']}")
    flagged = [r for r in results if not r.clean]
    lines = [
        f"# svc-auth benchmark, {when}",
        "",
        f"gunicorn sync, {args.workers} workers; wrk {args.threads} threads, "
        f"{args.connections} connections, {args.duration} s per endpoint, on 127.0.0.1; "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; SQLite; rate limits off; "
        f"argon2id {argon2} (production defaults). The floor is bench/floor_app.py "
        "(Flask, constant JSON) under the same settings, measured in the same run. "
        f"Load average before the run: {load[0]:.2f}. On a shared machine trust the ratios, "
        "not the absolute numbers.",
        "",
        table(results),
        "",
    ]
    if flagged:
        lines.append("**FLAGGED: this run had errors** (" + "; ".join(
            f"{r.name}: {r.bad} non-200 (last {r.last_bad}), {r.socket_errors} socket errors"
            for r in flagged) + "). Do not trust its numbers.")
    else:
        lines.append("Every response was 200; no socket errors.")
    return "\n".join(lines) + "\n"


# Main ------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per endpoint")
    parser.add_argument("--warmup", type=int, default=2, help="unrecorded seconds first")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=BENCH / "results" / "latest.md")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: run scripts/install-bench-tools")
    load = os.getloadavg()

    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="svc-bench-")))
        env = service_env(workdir)
        migrate(env)
        service = Gunicorn("service", "wsgi:app", ROOT, env, workdir, args.workers)
        stack.callback(service.stop)
        floor = Gunicorn("floor", "floor_app:app", BENCH,
                         {k: v for k, v in os.environ.items() if not k.startswith("SVC_")},
                         workdir, args.workers)
        stack.callback(floor.stop)
        service.wait_until_up("/health")
        floor.wait_until_up("/")

        email = f"bench-{secrets.token_hex(4)}@example.com"
        password = f"bench passphrase {secrets.token_hex(8)}"
        status, body = http("POST", service.base_url + "/api/v2/auth/signup",
                            {"email": email, "password": password, "full_name": "Bench"})
        if status != 201:
            raise SystemExit(f"signup failed: {status} {body}")
        status, body = http("POST", service.base_url + "/api/v2/auth/login",
                            {"email": email, "password": password})
        if status != 200:
            raise SystemExit(f"login failed: {status} {body}")
        access_token = body["access_token"]
        status, body = http("GET", service.base_url + "/api/v2/auth/verify",
                            headers={"Authorization": f"Bearer {access_token}"})
        if status != 200:
            raise SystemExit(f"verify failed: {status} {body}")

        wrk_env = {**os.environ, "BENCH_DIR": str(BENCH), "BENCH_ACCESS_TOKEN": access_token,
                   "BENCH_LOGIN_BODY": json.dumps({"email": email, "password": password})}
        scenarios = [
            Scenario("floor: Flask constant JSON (GET /)", floor.base_url + "/", "floor.lua"),
            Scenario("GET /api/v2/auth/verify", service.base_url + "/api/v2/auth/verify",
                     "verify.lua"),
            Scenario("POST /api/v2/auth/login", service.base_url + "/api/v2/auth/login",
                     "login.lua"),
        ]
        results = []
        for scenario in scenarios:
            if args.warmup:
                run_wrk(scenario, args, wrk_env, args.warmup)
            result, raw = run_wrk(scenario, args, wrk_env, args.duration)
            print(f"--- {scenario.name}\n{raw}", file=sys.stderr)
            results.append(result)

    text = report(results, args, load)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    return 0 if all(r.clean for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
