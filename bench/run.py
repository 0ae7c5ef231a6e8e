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
    under the temporary folder, with uvicorn workers;
  - then the production shape (bench/production.py): PostgreSQL, Redis, two instances of the
    service and two of the floor behind one nginx (--production-only: that part alone).
Then runs wrk (--latency; an unrecorded warm-up, then the measured run) against each scenario,
and prints a markdown report, also written to bench/results/latest.md. See bench/README.md.

The modules: servers.py (set-up and the servers, through tests/support's gunicorn launcher),
wrk.py (running wrk and reading its output), scenarios.py (each scenario, in order), report.py
(the markdown report and its targets), production.py, probes.py and report_production.py (the
production shape, what it measures beside wrk, its section of the report), and this one (the
command line and the order).

Exit status: 1 when a run had an unexpected status or a socket error (its numbers are not to be
trusted), 2 with --fail-on-miss when a target was missed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from log import progress
from production import run_production
from report import build_report
from scenarios import (
    fastapi_users,
    login_against_the_bound,
    other_endpoints,
    saturation,
    scaling,
    set_up,
    the_floor_again,
    verify_against_the_floor,
)
from servers import BENCH
from wrk import Result

from app.config import DEFAULTS  # the production argon2id (servers.py puts app on sys.path)


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
    parser.add_argument("--output", type=Path, default=None,
                        help="default: results/latest.md (results/production-latest.md with "
                        "--production-only)")
    shape = parser.add_argument_group("the production shape (bench/production.py)")
    shape.add_argument("--production-only", action="store_true",
                       help="only the production shape: a quick run of a few minutes")
    shape.add_argument("--skip-production", action="store_true")
    shape.add_argument("--prod-workers", type=int, default=None,
                       help="workers per instance (WEB_CONCURRENCY); default as --workers")
    shape.add_argument("--prod-env", action="append", default=[], metavar="SVC_NAME=VALUE",
                       help="a setting for both service instances (to measure a variant)")
    shape.add_argument("--service-root", default=None,
                       help="serve the service from another checkout (to measure old code)")
    shape.add_argument("--baseline-root", default=None,
                       help="also measure, in the same run, the service from another checkout")
    shape.add_argument("--baseline-env", action="append", default=[], metavar="NAME=VALUE",
                       help="also measure, in the same run, the service with these settings "
                       "(or those of --baseline-root)")
    shape.add_argument("--profile", type=int, default=10,
                       help="seconds of py-spy on one worker (0: no profile)")
    args = parser.parse_args()
    if args.output is None:
        name = "production-latest.md" if args.production_only else "latest.md"
        args.output = BENCH / "results" / name
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: run scripts/install-bench-tools")
    load_before = os.getloadavg()
    began = datetime.now(UTC)
    argon2 = {"m": int(DEFAULTS["ARGON2_MEMORY_COST"]), "t": int(DEFAULTS["ARGON2_TIME_COST"]),
              "p": int(DEFAULTS["ARGON2_PARALLELISM"])}
    results: dict[str, Result]
    notes: dict[str, Any]
    results: dict[str, Result] = {}
    notes: dict[str, Any] = {}
    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="svc-bench-")))
        if not args.production_only:
            bench = set_up(args, stack, workdir, argon2)
            verify_against_the_floor(bench)
            saturation(bench)
            login_against_the_bound(bench)
            other_endpoints(bench)
            scaling(bench)
            if bench.peer_python is not None:
                fastapi_users(bench, bench.peer_python)
            the_floor_again(bench)
            results, notes = bench.results, bench.notes
        if not args.skip_production:
            with ExitStack() as production:  # its servers stop before the report
                run_production(args, production, workdir, results, notes)

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


if __name__ == "__main__":
    raise SystemExit(main())
