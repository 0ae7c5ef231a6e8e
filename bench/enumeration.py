"""Does an answer take the same time whether or not the account exists? (SECURITY.md 6-8.)

Starts svc-auth as it is shipped, `gunicorn -c gunicorn.conf.py wsgi:app` (sync workers, one per
core), on 127.0.0.1, on a fresh migrated SQLite database with production settings, the production
argon2id and mail written to files, and times requests over real connections (from the request's
first byte to the answer's last; the connection is opened before the clock starts):

  - failed logins: unknown email, wrong password, disabled account;
  - forgot-password: unknown email, an existing account (which gets a reset mail);
  - resend-confirmation: unknown email, an unconfirmed account (which gets a confirmation mail).

Each round sends one request of every case of an endpoint, in an order that is reversed every
other round, after a pause (--gap) long enough for the mail work of the request before to be over:
what is timed is the answer itself. For each case: the median, its distance from the unknown-email
median, and the share of its samples above that median (about 50% when the two are alike).

A last table times an unknown-email forgot-password sent right after (no pause) an unknown or an
existing one: what the mail work of the first, still running, costs the next request, on whatever
worker it lands. It is reported, not judged.

    .venv/bin/python bench/enumeration.py [--samples 100] [--gap 0.05]

Exits 1 when a judged median is more than 10% away from the unknown-email median of its endpoint.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from servers import BenchServer, migrate_template, service_env, start_server  # noqa: E402

from app import create_app  # noqa: E402
from app.domain.accounts import accounts  # noqa: E402
from app.extensions import db  # noqa: E402
from tests.support.server import HOST  # noqa: E402

PASSWORD = "correct horse battery staple"
SHIPPED_CONF = ROOT / "gunicorn.conf.py"
UNKNOWN = "nobody@example.com"
KNOWN = "known@example.com"
UNCONFIRMED = "unconfirmed@example.com"
DISABLED = "disabled@example.com"

Send = Callable[[str, dict[str, str]], float]


def seed(env: dict[str, str]) -> None:
    """The accounts the cases need, hashed with the production argon2id."""
    app = create_app({"INSTANCE_PATH": env["SVC_INSTANCE_PATH"], "SECRET_KEY": "bench-seed",
                      "SQLALCHEMY_DATABASE_URI": env["SVC_DATABASE_URL"],
                      "MAIL_URL": "memory://"})
    with app.app_context():
        accounts.create_user(KNOWN, PASSWORD).email_verified = True
        accounts.create_user(UNCONFIRMED, PASSWORD)
        accounts.create_user(DISABLED, PASSWORD).disabled_at = datetime.now(UTC)
        db.session.commit()
        db.engine.dispose()


def sender(port: int, expected: dict[str, int]) -> Send:
    def send(path: str, body: dict[str, str]) -> float:
        """POST `body` as JSON on a fresh connection; the seconds until the answer's last byte."""
        connection = http.client.HTTPConnection(HOST, port, timeout=30)
        try:
            connection.connect()
            payload = json.dumps(body).encode()
            started = time.perf_counter()
            connection.request("POST", path, body=payload,
                               headers={"Content-Type": "application/json"})
            response = connection.getresponse()
            response.read()
            elapsed = time.perf_counter() - started
        finally:
            connection.close()
        if response.status != expected[path]:
            raise SystemExit(f"{path} {body}: {response.status}, expected {expected[path]}")
        return elapsed
    return send


def compare(send: Send, path: str, cases: dict[str, dict[str, str]], samples: int,
            gap: float) -> float:
    """Print the medians of interleaved requests; return the largest gap to the first case."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    order = list(cases.items())
    for round_ in range(samples):
        for name, body in order if round_ % 2 == 0 else reversed(order):
            time.sleep(gap)
            times[name].append(send(path, body))
    return report(f"{path} ({samples} interleaved samples each)", times)


def right_after(send: Send, path: str, before: dict[str, dict[str, str]],
                probe: dict[str, str], samples: int, gap: float) -> float:
    """Time `probe` sent at once after each request of `before` (which is not timed)."""
    times: dict[str, list[float]] = {f"right after {name}": [] for name in before}
    order = list(before.items())
    for round_ in range(samples):
        for name, body in order if round_ % 2 == 0 else reversed(order):
            time.sleep(gap)
            send(path, body)
            times[f"right after {name}"].append(send(path, probe))
    return report(f"{path}, unknown email ({samples} samples each)", times)


def report(title: str, times: dict[str, list[float]]) -> float:
    baseline = statistics.median(next(iter(times.values())))
    print(f"\n| {title} | median ms | vs the first | samples above its median |")
    print("|---|---:|---:|---:|")
    worst = 0.0
    for name, observed in times.items():
        median = statistics.median(observed)
        above = sum(t > baseline for t in observed) / len(observed)
        worst = max(worst, abs(median / baseline - 1))
        print(f"| {name} | {median * 1000:.2f} | {median / baseline - 1:+.1%} | {above:.0%} |")
    return worst


def steal_ticks() -> tuple[int, int]:
    """(steal, total) CPU ticks of the whole machine, from /proc/stat."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[7], sum(fields)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.05,
                        help="seconds of pause before each timed request")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="svc-enum-"))
    server: BenchServer | None = None
    try:
        env = service_env(workdir / "service")
        shutil.copyfile(migrate_template(workdir),
                        env["SVC_DATABASE_URL"].removeprefix("sqlite:///"))
        seed(env)
        server = start_server("service", "wsgi:app", ROOT, env, workdir, None,
                              config=SHIPPED_CONF)
        load_before, steal_before = os.getloadavg(), steal_ticks()
        print(f"svc-auth under gunicorn -c gunicorn.conf.py: {len(server.worker_pids())} sync "
              f"workers on {os.cpu_count()} cores; load average {load_before[0]:.2f} at the start")
        send = sender(server.port, {"/api/v2/auth/login": 401,
                                    "/api/v2/auth/forgot-password": 202,
                                    "/api/v2/auth/resend-confirmation": 202})
        login = {
            "unknown email": {"email": UNKNOWN, "password": PASSWORD},
            "wrong password": {"email": KNOWN, "password": "wrong " + PASSWORD},
            "disabled account": {"email": DISABLED, "password": PASSWORD},
        }
        forgot = {"unknown email": {"email": UNKNOWN}, "existing account": {"email": KNOWN}}
        resend = {"unknown email": {"email": UNKNOWN},
                  "unconfirmed account": {"email": UNCONFIRMED}}
        worst = max(
            compare(send, "/api/v2/auth/login", login, args.samples, args.gap),
            compare(send, "/api/v2/auth/forgot-password", forgot, args.samples, args.gap),
            compare(send, "/api/v2/auth/resend-confirmation", resend, args.samples, args.gap),
        )
        right_after(send, "/api/v2/auth/forgot-password", forgot, forgot["unknown email"],
                    args.samples, args.gap)
        steal_after = steal_ticks()
        stolen = (steal_after[0] - steal_before[0]) / max(steal_after[1] - steal_before[1], 1)
        mails = len(list((workdir / "service" / "mail").glob("*.eml")))
        print(f"\nload average {os.getloadavg()[0]:.2f} at the end; {stolen:.1%} of the CPU "
              f"time stolen by the hypervisor during the run; {mails} mails written")
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
