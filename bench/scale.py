"""Cost as the data grows: rows examined and database time per operation, at 10^3 and 10^6
accounts, on PostgreSQL.

    .venv/bin/python bench/scale.py                      # 10^3 and 10^6 (the 10^6 load: minutes)
    .venv/bin/python bench/scale.py --large 100000       # a quicker look

For each size it starts a throwaway PostgreSQL server (the tests' launcher), makes a database
with a non-C collation (ICU en-US, as production databases usually have), migrates it to head
(`flask db upgrade`'s migrations), loads the accounts with COPY and the rest of the data shape
(5 audit and 5 account events each, 1.2 deliveries, a session, a sent mail, a backlog, one
account with 5,000 open sessions) with INSERT ... SELECT, builds the secondary indexes (dropped for
the load), then VACUUM ANALYZE. Each operation
calls the service's own domain function in an app bound to that database; every statement it
sends is captured and run again under EXPLAIN (ANALYZE): rows examined are the rows the plan's
scans read (returned plus removed by a filter or a recheck), database time the median of five
executions. An operation whose rows examined grow with the data has its plans printed.

The report goes to stdout and to --out (default bench/results/scale-<date>.md).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from flask import Flask  # noqa: E402
from flask_migrate import upgrade  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from app import create_app  # noqa: E402
from app.domain import deliveries  # noqa: E402
from app.domain.accounts import emails  # noqa: E402
from app.domain.admin import activity, directory  # noqa: E402
from app.domain.admin.pages import cursor_of  # noqa: E402
from app.domain.mail import outbox_ops  # noqa: E402
from app.extensions import db  # noqa: E402
from app.infra.live_sql import LIVE_ACCOUNT  # noqa: E402
from app.models import User  # noqa: E402
from tests.support import plans  # noqa: E402
from tests.support.postgres import PostgresServer, start_postgres  # noqa: E402

FIRST = ["Anna", "Ben", "Carla", "David", "Emma", "Felix", "Greta", "Hugo", "Ida", "Jonas",
         "Klara", "Leo", "Mia", "Noah", "Olga", "Paul", "Rosa", "Sami", "Tara", "Umar", "Vera",
         "Wim", "Xenia", "Yusuf", "Zoe", "Ada", "Bruno", "Chiara", "Dario", "Elif"]
LAST = ["Schmidt", "Müller", "Rossi", "García", "Dubois", "Novak", "Kowalski", "Jensen", "Silva",
        "Haddad", "Tanaka", "Nguyen", "Okafor", "Ivanova", "Larsen", "Moreau", "Fischer", "Costa",
        "Weber", "Ahmed", "Hansen", "Romano", "Petrov", "Lindqvist", "Brennan", "Kaplan",
        "Mendes", "Fontaine", "Vogel", "Sato"]
DOMAINS = ("example.com", "mail.example", "post.example.org", "corp.example.net")
START = datetime(2023, 1, 1, tzinfo=UTC)
NEEDLE = ("Wilhelmina", "Zyzzkowska")  # one person: the support desk looks for a part of her name
BUSY_SESSIONS = 5000


# Loading ------------------------------------------------------------------------------------

def _users(count: int, rng: random.Random) -> Iterator[tuple[Any, ...]]:
    span = timedelta(days=3 * 365) / count
    needle_at = count // 2
    for i in range(count):
        first, last = (NEEDLE if i == needle_at else (rng.choice(FIRST), rng.choice(LAST)))
        address = f"{first}.{last}{i}@{rng.choice(DOMAINS)}".lower()
        created = START + span * i + timedelta(milliseconds=rng.randrange(1000))
        roll = rng.random()
        plan = "enterprise" if roll < 0.01 else "pro" if roll < 0.1 else "free"
        disabled = created + timedelta(days=30) if rng.random() < 0.02 else None
        language = rng.choice(("en", "de", "fr", "es", None))
        yield (str(uuid.UUID(int=rng.getrandbits(128), version=4)), address, address,
               f"{first} {last}", "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA", plan, True,
               created, created, disabled, language, False)


USER_COLUMNS = ("id, email, email_key, full_name, password_hash, plan, email_verified, "
                "email_verified_at, created_at, disabled_at, language, operator")

def load(server: PostgresServer, name: str, count: int, work: Path) -> str:
    """A migrated database of `count` accounts; its URL."""
    with server.connect(autocommit=True) as connection:
        connection.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' "  # our own name
            "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'")
    url = server.url(name)
    app = _app(url, work / f"instance-{name}")
    with app.app_context():
        upgrade()
        db.engine.dispose()
    rng = random.Random(count)
    with server.connect(name) as connection:
        started = time.monotonic()
        # Loaded without the secondary indexes, which are then built as migration 0090 would on
        # a full table (one sort each, not a million inserts into each).
        secondary = connection.execute(
            """SELECT indexname, indexdef FROM pg_indexes i WHERE schemaname = 'public'
               AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)"""
        ).fetchall()
        for index, _definition in secondary:
            connection.execute(f'DROP INDEX "{index}"')
        with connection.cursor() as cursor, \
                cursor.copy(f"COPY users ({USER_COLUMNS}) FROM STDIN") as copy:
            for row in _users(count, rng):
                copy.write_row(row)
        _log(f"{name}: {count:,} accounts copied in {time.monotonic() - started:.0f} s")
        for statement in plans.FROM_ACCOUNTS:
            connection.execute(statement)
        busy = connection.execute("SELECT id FROM users ORDER BY email_key LIMIT 1").fetchone()
        connection.execute(  # one account signed in on many devices
            """INSERT INTO sessions (id, user_id, provider, created_at, last_used_at, expires_at)
               SELECT gen_random_uuid()::text, %s, 'password', now(), now(),
                      now() + interval '30 days' FROM generate_series(1, %s)""",
            (busy[0], BUSY_SESSIONS))
        connection.commit()
        _log(f"{name}: loaded in {time.monotonic() - started:.0f} s")
        connection.execute("SET maintenance_work_mem = '512MB'")
        for _index, definition in secondary:
            connection.execute(definition)
        connection.commit()
        _log(f"{name}: {len(secondary)} indexes built, {time.monotonic() - started:.0f} s in all")
    with server.connect(name, autocommit=True) as connection:
        connection.execute("VACUUM ANALYZE")
    return url


def _app(url: str, instance: Path) -> Flask:
    instance.mkdir(parents=True, exist_ok=True)
    return create_app({"INSTANCE_PATH": str(instance), "SECRET_KEY": "bench",
                       "SQLALCHEMY_DATABASE_URI": url, "TESTING": True,
                       "PUBLIC_URL": "http://auth.bench.test"})


# Measuring ----------------------------------------------------------------------------------

@dataclass
class Figure:
    rows: int = 0  # rows the scans read
    milliseconds: float = 0.0  # the statements' median execution time, summed
    statements: int = 0
    # Rows the scans read in the generic plans the server may keep once psycopg has prepared the
    # statements; None: the call asks for a plan of its own values each time.
    generic_rows: int | None = 0
    plans: list[str] = field(default_factory=list)


def measure(app: Flask, run: Callable[[], object]) -> Figure:
    with app.test_request_context(), plans.captured(app, ("SET", "SELECT", "WITH")) as every:
        run()
        db.session.rollback()
    sent = [one for one in every if not one[0].startswith("SET")]
    custom_only = any("force_custom_plan" in statement for statement, _ in every)
    figure = Figure(statements=len(sent), generic_rows=None if custom_only else 0)
    with app.app_context(), db.engine.connect() as connection:
        for statement, parameters in sent:
            figure.rows += plans.explain(connection, (statement, parameters),
                                         analyze=True).scanned
            if figure.generic_rows is not None:
                figure.generic_rows += plans.explain(
                    connection, (statement, parameters), analyze=True,
                    generic=bool(parameters)).scanned
            times = []
            for _ in range(5):
                started = time.perf_counter()
                connection.exec_driver_sql(statement, parameters).fetchall()
                times.append((time.perf_counter() - started) * 1000)
            figure.milliseconds += statistics.median(times)
            text = connection.exec_driver_sql(
                "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + statement, parameters).scalars()
            figure.plans.append("\n".join(text))
        connection.rollback()
    return figure


@dataclass(frozen=True)
class Subjects:
    """Rows of a loaded database that the operations look for."""

    middle_email: str
    middle_at: datetime
    middle_id: str
    oldest_id: str
    busy_user: str
    busy_session: str


def subjects(app: Flask) -> Subjects:
    with app.app_context():
        half = db.session.scalar(select(func.count()).select_from(User)) // 2
        row = db.session.execute(select(User.email, User.created_at, User.id)
                                 .order_by(User.created_at, User.id).offset(half).limit(1)).one()
        oldest = db.session.execute(db.text(
            "SELECT id FROM users ORDER BY created_at LIMIT 1")).scalar_one()
        busy = db.session.execute(db.text(
            "SELECT user_id, id FROM sessions WHERE user_id = "
            "(SELECT id FROM users ORDER BY email_key LIMIT 1) ORDER BY created_at DESC "
            "LIMIT 1")).one()
        db.session.rollback()
    return Subjects(row[0], row[1], row[2], oldest, busy[0], busy[1])


def operations(found: Subjects) -> dict[str, Callable[[], object]]:
    search, users = directory.Search, directory.search_users
    middle = cursor_of([found.middle_at.isoformat(), found.middle_id])

    def verify_lookup() -> object:
        return db.session.execute(LIVE_ACCOUNT, {
            "session_id": found.busy_session, "at": datetime.now(UTC)}).all()

    return {
        "mail (language of the address)": lambda: emails.reset_password(
            found.middle_email, "token", 30),
        "users list, first page": lambda: users(search(), 50),
        "users list, a page in the middle (cursor)": lambda: users(search(), 50, middle),
        "users list, plan=enterprise (1%)": lambda: users(search(plan="enterprise"), 50),
        "users list, status=disabled (2%)": lambda: users(
            search(status=directory.Status.DISABLED), 50),
        "users list, email prefix": lambda: users(search(found.middle_email[:8]), 50),
        "search q= a part of a name (one person)": lambda: users(search(text="zzkowsk"), 50),
        "search q= a common name": lambda: users(search(text="kowalski"), 50),
        "search q= a part of an id": lambda: users(search(text=found.middle_id[9:23]), 50),
        "account's events (all old)": lambda: activity.account_events(
            found.oldest_id, activity.EventFilter(), 50),
        "deliveries list": lambda: deliveries.recent(),
        "deliveries list, site=shop": lambda: deliveries.recent(site="shop"),
        "deliveries list, status=failed": lambda: deliveries.recent(status="failed"),
        "/metrics outbox gauges": outbox_ops.waiting,
        f"verify lookup, account with {BUSY_SESSIONS:,} sessions": verify_lookup,
    }


# The report ---------------------------------------------------------------------------------

def report(sizes: list[int], figures: dict[int, dict[str, Figure]], loaded: dict[int, float],
           host: str) -> str:
    small, large = sizes
    lines = [f"# Scale: {datetime.now(UTC):%Y-%m-%d}", "",
             f"PostgreSQL, ICU en-US collation, {host}. Loaded {large:,} accounts in "
             f"{loaded[large] / 60:.1f} min. Rows examined: the rows the plan's scans read; "
             "generic: the same in the generic plan PostgreSQL may keep once psycopg has "
             "prepared the statement (a connection's 5th run of it; \"per call\": the call asks "
             "for a plan of its own values); time: the statements' median of five executions, "
             "summed.", "",
             f"| operation | statements | rows at {small:,} | rows at {large:,} | "
             f"generic at {large:,} | ms at {small:,} | ms at {large:,} |",
             "|---|---|---|---|---|---|---|"]
    growing = []
    for name in figures[small]:
        a, b = figures[small][name], figures[large][name]
        generic = "per call" if b.generic_rows is None else f"{b.generic_rows:,}"
        lines.append(f"| {name} | {b.statements} | {a.rows:,} | {b.rows:,} | {generic} | "
                     f"{a.milliseconds:.2f} | {b.milliseconds:.2f} |")
        worst = max(b.rows, b.generic_rows or 0)
        if worst > max(4 * a.rows, a.rows + 500):
            growing.append(name)
    lines += ["", "Grows with the data (rows at the larger size, in either plan, over 4x and "
              "500 more than at the smaller): " + (", ".join(growing) or "none") + ".", ""]
    for name in figures[large]:
        lines += [f"## {name} ({large:,})", "", "```",
                  "\n\n".join(figures[large][name].plans), "```", ""]
    return "\n".join(lines)


def _log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=1_000_000)
    today = f"{datetime.now(UTC):%Y-%m-%d}"
    parser.add_argument("--out", type=Path,
                        default=ROOT / "bench" / "results" / f"scale-{today}.md")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="svc-scale-"))
    work.chmod(0o711)  # the server may run as another user (tests/support/postgres.py)
    server = start_postgres(work)
    figures: dict[int, dict[str, Figure]] = {}
    loaded: dict[int, float] = {}
    try:
        for count in (args.small, args.large):
            started = time.monotonic()
            url = load(server, f"scale_{count}", count, work)
            loaded[count] = time.monotonic() - started
            app = _app(url, work / f"instance-measure-{count}")
            found = subjects(app)
            figures[count] = {name: measure(app, run)
                              for name, run in operations(found).items()}
            with app.app_context():
                db.engine.dispose()
            _log(f"{count:,}: measured")
        host = f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end"
        text = report([args.small, args.large], figures, loaded, host)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
