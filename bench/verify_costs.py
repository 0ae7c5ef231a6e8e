"""What one verify costs in CPU time, in-process, in the production shape's settings, and what each
part of that shape adds: the CPU time of a process is far less sensitive to the machine's other
load than a rate measured through sockets.

    .venv/bin/python bench/verify_costs.py [--calls 3000] [--baseline-root PATH] [--profile]

Starts PostgreSQL and Redis (tests/support's launchers), migrates and seeds one database
(bench/seed.py), then, for each variant, a child process that builds the app with
SVC_ENV=production and the variant's settings and calls it as gunicorn would (the WSGI callable,
an environ for GET /api/v2/auth/verify with a bearer token and nginx's X-Forwarded-* headers):
200 calls to warm up, then five batches, timed with time.process_time(); every variant once a
round, for three rounds. Prints the fastest batch's microseconds per call (the least disturbed)
and the median of the rounds' median batches, and with --profile the
functions where the default variant spends its time (cProfile, by own time). Everything the
worker does around the app (gunicorn's request parsing, its access log, the socket) is left out:
the floor pays it too.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

# name, settings over the production shape's, the checkout to run ("" for this one), the app
VARIANTS: list[tuple[str, dict[str, str], str, str]] = [
    ("production shape, as shipped", {}, "", "wsgi:app"),
    ("without ProxyFix (SVC_TRUSTED_PROXIES=0)", {"SVC_TRUSTED_PROXIES": "0"}, "", "wsgi:app"),
    ("text logs (SVC_LOG_FORMAT=text)", {"SVC_LOG_FORMAT": "text"}, "", "wsgi:app"),
    ("rate limits off", {"SVC_RATELIMIT_ENABLED": "false"}, "", "wsgi:app"),
    ("without Redis (the database on every call)", {"SVC_REDIS_URL": ""}, "", "wsgi:app"),
    ("the floor app (Flask, constant JSON)", {}, str(BENCH), "floor_app:app"),
]


def cpu_per_call(fn: Any, calls: int, batches: int = 5) -> list[float]:
    """Microseconds of this process's CPU time per call of `fn`, for each batch of `calls`."""
    found = []
    for _ in range(batches):
        started = time.process_time()
        for _ in range(calls):
            fn()
        found.append((time.process_time() - started) / calls * 1e6)
    return found


def child(app_spec: str, calls: int, profile: bool) -> dict[str, Any]:
    module, name = app_spec.split(":")
    app = getattr(__import__(module), name)
    path = "/" if module == "floor_app" else "/api/v2/auth/verify"
    from werkzeug.test import EnvironBuilder

    environ = EnvironBuilder(path=path, base_url="http://127.0.0.1:8000", headers={
        "Authorization": f"Bearer {os.environ.get('BENCH_TOKEN', '')}",
        "X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https",
        "X-Request-Id": "benchrequest0001", "User-Agent": "wrk"}).get_environ()

    def one() -> None:
        statuses: list[str] = []
        body = app(dict(environ), lambda status, headers, exc_info=None: statuses.append(status))
        b"".join(body)
        getattr(body, "close", lambda: None)()
        if not statuses[0].startswith("200"):
            raise SystemExit(f"{path} answered {statuses[0]}")

    for _ in range(200):
        one()
    batches = cpu_per_call(one, calls)
    found: dict[str, Any] = {"best_us": min(batches), "median_us": statistics.median(batches)}
    if profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            one()
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
        found["profile"] = out.getvalue()
    return found


def small_costs(calls: int = 20_000) -> dict[str, float]:
    """Microseconds of CPU: werkzeug's ProxyFix (one trusted hop, as SVC_TRUSTED_PROXIES=1 sets
    it) around a WSGI callable that does nothing, over that callable alone; and one line of the
    service's JSON log format, formatted and written to /dev/null."""
    import logging

    from werkzeug.middleware.proxy_fix import ProxyFix
    from werkzeug.test import EnvironBuilder

    from app.observability import JsonFormatter

    environ = EnvironBuilder(path="/", headers={"X-Forwarded-For": "203.0.113.9",
                                                "X-Forwarded-Proto": "https"}).get_environ()

    def bare(env: dict[str, Any], start: Any) -> list[bytes]:
        return []

    def per_call(fn: Any) -> float:
        return min(cpu_per_call(fn, calls))

    fixed = ProxyFix(bare, x_for=1, x_proto=1)  # type: ignore[arg-type]
    proxy_fix = per_call(lambda: fixed(dict(environ), None)) - per_call(
        lambda: bare(dict(environ), None))
    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115 (closed at exit)
    handler.setFormatter(JsonFormatter())
    record = logging.LogRecord("svc_auth.audit", logging.INFO, __file__, 1,
                               "event=login_succeeded user=%s", ("0" * 36,), None)
    record.request_id = "0" * 32
    return {"proxy_fix": proxy_fix, "json_line": per_call(lambda: handler.handle(record))}


def run_variant(root: Path, env: dict[str, str], app_spec: str, args: argparse.Namespace,
                profile: bool) -> dict[str, Any]:
    code = (f"import sys, json; sys.path[:0] = [{str(root)!r}, {str(BENCH)!r}]; "
            "import verify_costs; print(json.dumps(verify_costs.child("
            f"{app_spec!r}, {args.calls}, {profile})))")
    result = subprocess.run([sys.executable, "-c", code], cwd=root, env=env,
                            capture_output=True, text=True, timeout=900, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{app_spec} in {root} failed:\n{result.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3,
                        help="every variant once a round, in the same order: the machine's "
                        "drift is shared out")
    parser.add_argument("--baseline-root", default=None, help="also: another checkout's verify")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from servers import clean_env, seed_instance

    from tests.support.deployment import migrate, shared_settings
    from tests.support.postgres import start_postgres
    from tests.support.redis import start_redis

    variants = list(VARIANTS)
    if args.baseline_root:
        variants.insert(1, (f"the checkout at {args.baseline_root}", {}, args.baseline_root,
                            "wsgi:app"))
    with ExitStack() as stack:
        base = Path(tempfile.mkdtemp(prefix="svc-bench-costs-"))
        base.chmod(0o711)  # PostgreSQL runs as its own user when we are root
        postgres = start_postgres(base)
        stack.callback(postgres.stop)
        redis_server = start_redis(base / "redis")
        stack.callback(redis_server.stop)
        database_url = postgres.create_database("svc_costs")
        migrate(base / "work", database_url)
        settings = {**shared_settings(database_url, redis_server.url), "SVC_ENV": "production",
                    "SVC_PUBLIC_URL": "https://auth.bench.invalid", "SVC_TRUSTED_PROXIES": "1",
                    "SVC_MAIL_URL": f"file://{base / 'mail'}"}
        (base / "instance").mkdir()
        env = {**clean_env(), **settings, "SVC_INSTANCE_PATH": str(base / "instance")}
        seeded = seed_instance("costs", base / "costs", env, 10, 0)
        env["BENCH_TOKEN"] = seeded.first_access_token()
        load = os.getloadavg()
        print(f"load average before: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}; "
              f"{args.calls:,} calls a batch, five batches, CPU time of the process\n")
        best: dict[str, list[float]] = {name: [] for name, *_ in variants}
        profiled = ""
        for round_ in range(args.rounds):
            for name, overrides, root, app_spec in variants:
                profile = args.profile and round_ == args.rounds - 1 and name == variants[0][0]
                found = run_variant(Path(root) if root else ROOT, {**env, **overrides},
                                    app_spec, args, profile)
                best[name] += [found["best_us"], found["median_us"]]
                profiled = profiled or found.get("profile", "")
        print("| variant | µs per verify (fastest batch) | median of the rounds' medians |"
              " change |")
        print("|---|---:|---:|---:|")
        first = min(best[variants[0][0]][0::2])
        for name, figures in best.items():
            fastest = min(figures[0::2])
            print(f"| {name} | {fastest:.0f} | {statistics.median(figures[1::2]):.0f} | "
                  f"{fastest - first:+.0f} |")
        small = small_costs()
        print(f"\nProxyFix (one trusted hop) around a WSGI callable: {small['proxy_fix']:.1f} µs "
              f"a request. One JSON log line, formatted and written: {small['json_line']:.1f} µs"
              " (verify writes none; the access log is gunicorn's own line, the floor's too).")
        if profiled:
            print("\n```\n" + profiled + "```")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
