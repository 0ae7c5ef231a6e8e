"""Running wrk against a scenario and reading its output: a warm-up, the measured run, the
server's CPU time and background work around it, and the ABBA order for two scenarios."""

from __future__ import annotations

import argparse
import os
import re
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from log import progress
from servers import BENCH


class Target(Protocol):
    """What wrk loads: one gunicorn server (servers.BenchServer) or several behind one front
    (production.Deployment)."""

    @property
    def base_url(self) -> str: ...

    def cpu_seconds(self) -> float: ...

    def wait_idle(self, cap: float, interval: float = 0.5) -> float: ...

    def sample_rss(self) -> None: ...

    def counters(self) -> dict[str, Any] | None:
        """Figures read before a run (None: nothing beyond the CPU time)..."""

    def delta(self, before: dict[str, Any], requests: int,
              service_cpu_ms: float) -> dict[str, float]:
        """... and what changed in them by the end of it (Result.extra)."""


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
    # More figures of a production.Deployment, per request or as shares of the workers' time.
    extra: dict[str, float] = field(default_factory=dict)

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
        extra={key: (first.extra[key] * first.requests + second.extra.get(key, 0.0)
                     * second.requests) / max(total, 1) for key in first.extra},
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


@dataclass
class Scenario:
    key: str
    name: str
    server: Target
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
    before = server.counters()
    mails_start, cpu_start = count_mails(scenario.mail_dir), server.cpu_seconds()
    result, raw = run_wrk(scenario, args, duration or args.duration)
    mails_stop = count_mails(scenario.mail_dir)
    if scenario.background:
        result.drain_s = server.wait_idle(args.drain_cap)
    result.cpu_ms = (server.cpu_seconds() - cpu_start) * 1000 / max(result.requests, 1)
    if before is not None:
        result.extra = server.delta(before, result.requests, result.cpu_ms)
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
    merged_a, merged_b = measure_mirrored([a, b], args)
    return merged_a, merged_b


def measure_mirrored(scenarios: list[Scenario], args: argparse.Namespace) -> list[Result]:
    """A, B, C, C, B, A (ABBA for two): two runs of each, in an order that cancels a steady drift
    of the machine; each scenario's two runs merged."""
    first = [measure(scenario, args) for scenario in scenarios]
    second = [measure(scenario, args, warmup=False) for scenario in reversed(scenarios)]
    return [merge(a, b) for a, b in zip(first, reversed(second), strict=True)]
