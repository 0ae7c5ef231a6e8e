"""What the production shape measures beside wrk's figures: the CPU time of every process of the
deployment (the service's instances, nginx, Redis, PostgreSQL), where the service's workers spend
their wall time (on a CPU, waiting for one, or off it: blocked on the network or idle, from
/proc/PID/schedstat), Redis commands per request (INFO commandstats), and a py-spy profile of one
worker, its samples sorted into what the worker was doing."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import redis

TICK = os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """`pid` and every process under it, from /proc."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*/children"):
            try:
                queue.extend(int(child) for child in task.read_text().split())
            except OSError:
                continue
    return found


def process_cpu_seconds(pids: Iterable[int], *, waited_children: bool = False) -> float:
    """utime + stime of each process (and of its children that exited and were waited for)."""
    total = 0
    for pid in pids:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        total += int(fields[11]) + int(fields[12])
        if waited_children:
            total += int(fields[13]) + int(fields[14])
    return total / TICK


def schedstat(pids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Nanoseconds on a CPU and waiting on a run queue, by process."""
    found = {}
    for pid in pids:
        try:
            on_cpu, waiting, _slices = Path(f"/proc/{pid}/schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        found[pid] = (int(on_cpu), int(waiting))
    return found


@dataclass
class WorkerTime:
    """Shares of the workers' wall time during a run."""

    on_cpu: float = 0.0
    runnable: float = 0.0  # ready, waiting for a CPU
    off_cpu: float = 0.0  # blocked: on Redis, PostgreSQL, nginx's socket, or idle in accept

    @classmethod
    def between(cls, before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]],
                seconds: float) -> WorkerTime:
        both = [pid for pid in after if pid in before]
        if not both or seconds <= 0:
            return cls()
        wall = len(both) * seconds * 1e9
        on_cpu = sum(after[p][0] - before[p][0] for p in both) / wall
        runnable = sum(after[p][1] - before[p][1] for p in both) / wall
        return cls(on_cpu, runnable, max(0.0, 1 - on_cpu - runnable))


def redis_calls(client: redis.Redis) -> int:
    """Commands Redis has run since it started (every client), INFO itself left out."""
    stats = client.info("commandstats")
    return sum(int(v["calls"]) for k, v in stats.items() if k != "cmdstat_info")


# py-spy ----------------------------------------------------------------------------------------

PYSPY_RATE = 200
# What a sample's stack says the worker was doing, first match wins (py-spy's raw format: frames
# "function (file:line)" from the root to the leaf, separated by ";"). A pattern ending in "$"
# looks at the innermost frame only; the others at any frame of the stack.
CATEGORIES: list[tuple[str, re.Pattern[str]]] = [
    ("idle: waiting for a request (gunicorn's select/accept)",
     re.compile(r"(wait|accept) \([^;]*gunicorn/workers/sync\.py:\d+\)$")),
    ("Redis: blocked reading its answer",
     re.compile(r"(_read_from_socket|can_read|readline|read_response) \([^;]*redis/[^;]*\)$")),
    ("Redis: client code (the command, its answer)", re.compile(r"redis/")),
    ("PostgreSQL (psycopg)", re.compile(r"psycopg/")),
    ("logging (gunicorn's access log, the app's log lines)",
     re.compile(r"(logging/__init__|gunicorn/glogging)\.py")),
    ("gunicorn: reading the request, writing the answer, closing the connection",
     re.compile(r"\([^;]*(gunicorn/(util\.py|http/[^;:]*)|/socket\.py):\d+\)$")),
    ("the access token (signature cache, claims)", re.compile(r"domain/tokens/")),
    ("the rest: Flask, Werkzeug, the app, gunicorn's own Python", re.compile(r".")),
]


@dataclass
class Profile:
    samples: int = 0
    shares: dict[str, float] = field(default_factory=dict)
    top: list[tuple[str, float]] = field(default_factory=list)  # leaf functions by share
    error: str = ""


def _frame_name(frame: str) -> str:
    """`function (path/to/file.py:12)` without the line and all but the file's last folders."""
    match = re.match(r"(.*) \((.*?):\d+\)$", frame)
    if not match:
        return frame
    path = match.group(2)
    short = "/".join(path.split("/")[-2:])
    return f"{match.group(1)} ({short})"


def read_profile(raw: str) -> Profile:
    categories: Counter[str] = Counter()
    leaves: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = [f for f in stack.split(";") if not f.startswith(("process ", "thread "))]
        if not frames:
            continue
        joined = ";".join(frames)
        name = next(name for name, pattern in CATEGORIES if pattern.search(joined))
        categories[name] += count
        leaves[_frame_name(frames[-1])] += count
    if not total:
        return Profile(error="py-spy took no samples")
    return Profile(total, {k: v / total for k, v in categories.most_common()},
                   [(k, v / total) for k, v in leaves.most_common(12)])


def pyspy_profile(pid: int, seconds: float, out: Path) -> Profile:
    """py-spy record --idle on one process for `seconds` (samples of every thread: the request's
    and the outbox's, which idles)."""
    binary = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(binary).exists():
        return Profile(error="py-spy is not installed (pip install py-spy)")
    started = time.monotonic()
    result = subprocess.run(
        [binary, "record", "--idle", "--rate", str(PYSPY_RATE), "--duration", str(int(seconds)),
         "--format", "raw", "--output", str(out), "--pid", str(pid), "--nonblocking"],
        capture_output=True, text=True, timeout=seconds + 60, check=False)
    if result.returncode != 0 or not out.exists():
        return Profile(error=f"py-spy failed ({result.returncode}, "
                             f"{time.monotonic() - started:.1f} s): {result.stderr[-500:]}")
    raw = out.read_text()
    # Only the thread that serves requests: gunicorn's main thread, which every request's stack
    # starts from (the outbox's thread only sleeps or sends mail).
    main = "\n".join(line for line in raw.splitlines() if "(gunicorn/" in line)
    return read_profile(main)
