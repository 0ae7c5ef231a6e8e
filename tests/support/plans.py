"""What PostgreSQL does for a statement the service sends: the statements a call sends, captured
on the engine, and each one's plan (EXPLAIN), with what its scans read. The plan tests
(tests/test_scale_plans.py) and the scale benchmark (bench/scale.py) read plans this way."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from flask import Flask
from psycopg import sql
from sqlalchemy import Connection, event

from app.extensions import db

Sent = tuple[str, Any]  # a statement as the driver got it, and its parameters

# The data shape of a deployment, made from the accounts already in `users` (PostgreSQL), in the
# order things happened (serial ids follow time, as in service): a session each, 5 audit and 5
# account events, 1.2 deliveries (1 in 200 failed), a sent mail each, and a backlog of 500.
FROM_ACCOUNTS = (
    """INSERT INTO sessions (id, user_id, provider, created_at, last_used_at, expires_at, ip,
           user_agent)
       SELECT gen_random_uuid()::text, id, 'password', created_at, created_at,
              created_at + interval '3650 days', '192.0.2.1', 'bench' FROM users""",
    """INSERT INTO audit_events (at, event, user_id, ip)
       SELECT u.created_at + k * interval '1 day', 'login', u.id, '192.0.2.1'
       FROM users u, generate_series(0, 4) k ORDER BY 1""",
    """INSERT INTO account_events (id, type, user_id, occurred_at, data, dispatched_at)
       SELECT 'evt_' || md5(u.id || k), 'user.updated', u.id, u.created_at + k * interval '1 day',
              '{}', u.created_at + k * interval '1 day'
       FROM users u, generate_series(0, 4) k""",
    """INSERT INTO event_deliveries (id, kind, event_id, site, sid, status, attempts,
           next_attempt_at, created_at, finished_at)
       SELECT gen_random_uuid()::text, 'webhook', e.id,
              (ARRAY['shop', 'forum', 'wiki'])[1 + abs(hashtext(e.id)) % 3], '',
              CASE WHEN abs(hashtext(e.id || 's')) % 200 = 0 THEN 'failed' ELSE 'sent' END, 1,
              e.occurred_at, e.occurred_at, e.occurred_at
       FROM account_events e WHERE abs(hashtext(e.id)) % 25 < 6""",
    """INSERT INTO mail_jobs (id, kind, payload, status, attempts, next_attempt_at, created_at,
           finished_at)
       SELECT gen_random_uuid()::text, 'confirm_email', '{}', 'sent', 1, created_at, created_at,
              created_at FROM users""",
    """INSERT INTO mail_jobs (id, kind, payload, status, attempts, next_attempt_at, created_at)
       SELECT gen_random_uuid()::text, 'new_device', '{}', 'pending', 0,
              now() + interval '1 day' + k * interval '1 second', now()
       FROM generate_series(1, 500) k""",
)


@contextmanager
def captured(app: Flask, kinds: tuple[str, ...] = ("SELECT", "WITH")) -> Iterator[list[Sent]]:
    """The statements (by default the SELECTs) sent to the app's engine while the block runs."""
    sent: list[Sent] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if statement.lstrip().upper().startswith(kinds):
            sent.append((statement, parameters))

    with app.app_context():
        engine = db.engine
    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", keep)


def statements_of(app: Flask, run: Callable[[], object]) -> list[Sent]:
    """What `run` sends, called in a request context of `app` (as a view would)."""
    with app.test_request_context(), captured(app) as sent:
        run()
        db.session.rollback()
    return sent


@dataclass(frozen=True)
class Plan:
    tree: dict[str, Any]  # EXPLAIN (FORMAT JSON)'s "Plan"

    def nodes(self) -> Iterator[dict[str, Any]]:
        waiting = [self.tree]
        while waiting:
            node = waiting.pop()
            yield node
            waiting += node.get("Plans", [])

    @property
    def indexes(self) -> set[str]:
        return {node["Index Name"] for node in self.nodes() if "Index Name" in node}

    @property
    def kinds(self) -> set[str]:
        return {node["Node Type"] for node in self.nodes()}

    @property
    def scanned(self) -> int:
        """Rows the scans read: returned, or removed by a filter or a recheck (a bitmap's index
        scan is not counted again)."""
        return sum((node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
                    + node.get("Rows Removed by Index Recheck", 0)) * node.get("Actual Loops", 1)
                   for node in self.nodes()
                   if "Scan" in node["Node Type"] and node["Node Type"] != "Bitmap Index Scan")


def explain(connection: Connection, sent: Sent, *, analyze: bool = False,
            generic: bool = False) -> Plan:
    """The plan of a statement as sent, or (`generic`) the generic plan PostgreSQL may keep for
    it once prepared: psycopg prepares a statement a connection has run 5 times, and the server
    may then plan it once for any parameters."""
    options = "ANALYZE, FORMAT JSON" if analyze else "FORMAT JSON"
    if not generic:
        found = connection.exec_driver_sql(f"EXPLAIN ({options}) {sent[0]}", sent[1]).scalar()
        return Plan((found if isinstance(found, list) else json.loads(found))[0]["Plan"])
    numbered, values = _numbered(sent)
    name = f"plan_{uuid.uuid4().hex}"
    connection.exec_driver_sql("SET plan_cache_mode = force_generic_plan")
    connection.exec_driver_sql(f"PREPARE {name} AS {numbered}")
    try:
        driver = connection.connection.driver_connection
        arguments = sql.SQL(", ").join(sql.Literal(value) for value in values)
        found = driver.execute(sql.SQL("EXPLAIN ({}) EXECUTE {}({})").format(
            sql.SQL(options), sql.Identifier(name), arguments)).fetchone()[0]
    finally:
        connection.exec_driver_sql(f"DEALLOCATE {name}")
        connection.exec_driver_sql("RESET plan_cache_mode")
    return Plan((found if isinstance(found, list) else json.loads(found))[0]["Plan"])


def _numbered(sent: Sent) -> tuple[str, list[Any]]:
    """The statement with $1, $2... for its named parameters (as PREPARE takes it)."""
    statement, parameters = sent
    order: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match.group(1) not in order:
            order.append(match.group(1))
        return f"${order.index(match.group(1)) + 1}"

    numbered = re.sub(r"%\((\w+)\)s", number, statement)
    return numbered, [parameters[name] for name in order]
