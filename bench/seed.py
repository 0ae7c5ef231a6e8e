"""Fill a freshly migrated svc-auth database for bench/run.py, and write the pools wrk reads.

    .venv/bin/python bench/seed.py --out DIR --accounts 1000 --sessions 200 --refresh 20000

Runs with the service's own environment (SVC_DATABASE_URL, SVC_INSTANCE_PATH, ...), so the
tokens it writes are signed with the instance's keys and verify on the server started later.

- Accounts: one argon2id hash is computed once (the service's own hasher, production
  parameters) and reused; rows go straight into the users table with sqlite3's executemany,
  in batches (on PostgreSQL, the production shape's few accounts through SQLAlchemy's
  executemany). Emails are unique: user0000001@bench.example.com, ...
- Sessions: opened with the service's domain code (sessions.issue_tokens), for accounts
  spread over the whole table; each one gives an access token (verify pool) or a refresh token
  (refresh pool, each token used once).

Writes to DIR: emails.txt (a sample of the accounts' emails, for login and forgot-password),
access.txt, refresh.txt, and prints a JSON summary (password, timings) on stdout.
"""

from __future__ import annotations

import argparse
import json
import logging
import operator
import os
import random
import sqlite3
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PASSWORD = "bench seeded passphrase 4417"
BATCH = 50_000
SAMPLE = 200


def email_of(n: int) -> str:
    return f"user{n:07d}@bench.example.com"


def sqlite_path(url: str) -> str | None:
    """The file of a SQLite URL; None for another database."""
    return url.removeprefix("sqlite:///") if url.startswith("sqlite:///") else None


COLUMNS = ("id", "email", "email_key", "full_name", "password_hash", "plan", "email_verified",
           "created_at", "password_changed_at", "disabled_at")


def uuid4_strings(count: int) -> list[str]:
    """`count` random version-4 UUIDs as text, as the models' new_id() makes them (quickly)."""
    raw = os.urandom(16 * count).hex()
    found = []
    for i in range(0, 32 * count, 32):
        h = raw[i:i + 32]
        found.append(f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-"
                     f"{h[20:]}")
    return found


def seed_accounts(path: str, count: int, password_hash: str) -> float:
    """Insert `count` accounts with one shared hash; returns the seconds it took."""
    started = time.perf_counter()
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute("PRAGMA cache_size = -262144")  # 256 MiB: the indexes stay in memory
        columns = {row[1]: row for row in connection.execute("PRAGMA table_info(users)")}
        # A column added since (app/ changes under us): fine if it may be left to its default.
        for name, (_cid, _name, _type, notnull, default, _pk) in columns.items():
            if name not in COLUMNS and notnull and default is None:
                raise SystemExit(f"seed.py does not know how to fill users.{name}")
        keep = [i for i, name in enumerate(COLUMNS) if name in columns]
        names = [COLUMNS[i] for i in keep]
        # Column names from the schema itself, values as parameters.
        statement = (f"INSERT INTO users ({', '.join(names)}) "  # noqa: S608
                     f"VALUES ({', '.join('?' for _ in names)})")
        at = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        project = None if len(keep) == len(COLUMNS) else operator.itemgetter(*keep)

        def rows(start: int, stop: int) -> Iterator[tuple[object, ...]]:
            for n, user_id in zip(range(start, stop), uuid4_strings(stop - start), strict=True):
                email = email_of(n)
                row = (user_id, email, email, f"Bench {n}", password_hash, "free", 1, at, at,
                       None)
                yield row if project is None else project(row)

        for start in range(1, count + 1, BATCH):
            connection.execute("BEGIN")
            connection.executemany(statement, rows(start, min(start + BATCH, count + 1)))
            connection.execute("COMMIT")
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        connection.close()
    return time.perf_counter() - started


def seed_accounts_elsewhere(count: int, password_hash: str) -> float:
    """The same rows on another database (PostgreSQL), through the app's engine; for the few
    thousand accounts of the production shape, not a million."""
    from sqlalchemy import insert

    from app.extensions import db
    from app.models import User

    started = time.perf_counter()
    at = datetime.now(UTC)
    rows = [{"id": user_id, "email": email_of(n), "email_key": email_of(n),
             "full_name": f"Bench {n}", "password_hash": password_hash, "plan": "free",
             "email_verified": True, "created_at": at, "password_changed_at": at}
            for n, user_id in zip(range(1, count + 1), uuid4_strings(count), strict=True)]
    with db.engine.begin() as connection:
        connection.execute(insert(User.__table__), rows)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--accounts", type=int, default=1000)
    parser.add_argument("--sessions", type=int, default=SAMPLE, help="access tokens to write")
    parser.add_argument("--refresh", type=int, default=0, help="refresh tokens to write")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    from sqlalchemy import select

    from app import create_app
    from app.db.transactions import writes
    from app.domain.audit import ClientInfo
    from app.domain.services import services
    from app.domain.sessions import sessions
    from app.extensions import db
    from app.models import User

    app = create_app()
    # One audit line per session would flood the terminal; the audit rows are still written.
    logging.getLogger("svc_auth").setLevel(logging.WARNING)
    summary: dict[str, object] = {"password": PASSWORD, "accounts": args.accounts}
    with app.app_context():
        started = time.perf_counter()
        password_hash = services().hasher.hash(PASSWORD)
        summary["hash_seconds"] = time.perf_counter() - started
        summary["hash_prefix"] = password_hash.rsplit("$", 2)[0]
        db.session.remove()
        db.engine.dispose()
        path = sqlite_path(app.config["SQLALCHEMY_DATABASE_URI"])
        summary["seed_seconds"] = (seed_accounts(path, args.accounts, password_hash)
                                   if path is not None
                                   else seed_accounts_elsewhere(args.accounts, password_hash))

        # Accounts spread over the whole table (the first, the last, and random ones between).
        rng = random.Random(7)
        picks = sorted({1, args.accounts, *rng.sample(range(1, args.accounts + 1),
                                                       min(SAMPLE, args.accounts) - 2)})
        emails = [email_of(n) for n in picks]
        (args.out / "emails.txt").write_text("\n".join(emails) + "\n")

        started = time.perf_counter()
        users = list(db.session.scalars(select(User).where(User.email_key.in_(emails))))
        client = ClientInfo(ip="127.0.0.1", user_agent="svc-auth bench seed")

        @writes
        def open_sessions(count: int) -> list[sessions.IssuedTokens]:
            issued = []
            for i in range(count):
                issued.append(sessions.issue_tokens(users[i % len(users)], "password", client))
                if i % 1000 == 999:
                    db.session.commit()
            db.session.commit()
            return issued

        access = open_sessions(args.sessions)
        (args.out / "access.txt").write_text("".join(t.access_token + "\n" for t in access))
        refresh = open_sessions(args.refresh)
        (args.out / "refresh.txt").write_text("".join(t.refresh_token + "\n" for t in refresh))
        summary["session_seconds"] = time.perf_counter() - started
        summary["sessions"] = args.sessions + args.refresh
    json.dump(summary, sys.stdout)
    print()
    return 0


if __name__ == "__main__":
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    raise SystemExit(main())
