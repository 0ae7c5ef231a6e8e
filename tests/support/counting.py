"""What one request of each hot path costs, counted rather than timed: the SQL statements it runs
(SQLAlchemy's events, `BEGIN` counted, `COMMIT` not, plus the statements run straight on the
driver by app/db/driver_query.py) and the Python function calls it makes (cProfile's total),
through the test client, in the thread that serves it. A count does not move with the machine's
load; tests/test_budgets.py holds them to tests/budgets.toml.

    SVC_TEST_DATABASE=sqlite .venv/bin/python -m tests.support.counting   # prints the table
"""

from __future__ import annotations

import cProfile
import gc
import logging
import pstats
import re
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event

from app.db.driver_query import DriverQuery
from app.domain.accounts import accounts
from app.domain.clients import registration
from app.extensions import db
from tests.support import admin
from tests.support.accounts import PASSWORD

ORIGIN = "https://shop.example.com"
WARM_UP = 3  # requests before counting: first-use caches, compiled statements, templates
COUNTED = 5  # requests counted; every one must cost the same


@dataclass
class Cost:
    """What one request cost: its statements (by text, in order) and its Python calls."""

    statements: list[str] = field(default_factory=list)
    calls: int = 0


class Counter:
    """Counts the statements run by the current thread on the app's engine while `counting`."""

    def __init__(self, app: Flask) -> None:
        with app.app_context():
            self.engine = db.engine
        self.thread = threading.get_ident()
        self.seen: list[str] | None = None
        event.listen(self.engine, "begin", self._begin)
        event.listen(self.engine, "before_cursor_execute", self._statement)

    def _begin(self, _connection: Any) -> None:
        if self.seen is not None and threading.get_ident() == self.thread:
            self.seen.append("BEGIN")

    def _statement(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        # SQLite's BEGIN is our own statement (app/db/transactions.py): counted by the event.
        if (self.seen is not None and threading.get_ident() == self.thread
                and not statement.startswith("BEGIN")):
            self.seen.append(_short(statement))

    @contextmanager
    def counting(self) -> Iterator[list[str]]:
        seen: list[str] = []
        counter = self
        original = DriverQuery._run

        def run(query: DriverQuery, parameters: Any) -> Any:
            if threading.get_ident() == counter.thread:
                seen.append("driver: " + _short(query.sql))
            return original(query, parameters)

        self.seen = seen
        DriverQuery._run = run  # type: ignore[method-assign]
        try:
            yield seen
        finally:
            DriverQuery._run = original  # type: ignore[method-assign]
            self.seen = None

    def close(self) -> None:
        event.remove(self.engine, "begin", self._begin)
        event.remove(self.engine, "before_cursor_execute", self._statement)


def _short(statement: str) -> str:
    """The statement's kind and main table (a SELECT's last FROM: its subqueries come before)."""
    text = " ".join(statement.split())
    if text.startswith("SELECT"):
        tables = re.findall(r"\bFROM (\w+)", text)
        return f"SELECT {tables[-1] if tables else text[:40]}"
    found = re.match(r"(INSERT INTO|UPDATE|DELETE FROM) (\w+)", text)
    return f"{found.group(1)} {found.group(2)}" if found else text[:40]


class HotPaths:
    """The requests the budgets hold, each a callable that makes one request (and asserts its
    answer), on an app with an account, a registered site and an admin client."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.client: FlaskClient = app.test_client()
        with app.app_context():
            accounts.create_user("ada@example.com", PASSWORD, "Ada")
            user = accounts.create_user("bob@example.com", PASSWORD, "Bob")
            self.user_id = user.id
            db.session.commit()
            registration.add_site("shop", [f"{ORIGIN}/callback"], [ORIGIN])
        tokens = self._login()
        self.access, self.refresh_token = tokens["access_token"], tokens["refresh_token"]
        self.admin = admin.token(self.client, admin.register(
            app, "support", "users:read", "users:write"))
        self.pages = app.test_client()
        self.page_token = ""

    def _login(self, path: str = "/api/v2/auth/login") -> dict[str, Any]:
        response = self.client.post(path, json={"email": "ada@example.com",
                                                "password": PASSWORD})
        assert response.status_code == 200, response.get_json()
        body: dict[str, Any] = response.get_json()
        return body

    def verify(self) -> None:
        response = self.client.get("/api/v2/auth/verify",
                                   headers={"Authorization": f"Bearer {self.access}"})
        assert response.status_code == 200, response.get_json()

    def verify_origin(self) -> None:
        response = self.client.get("/api/v2/auth/verify", headers={
            "Authorization": f"Bearer {self.access}", "Origin": ORIGIN})
        assert response.status_code == 200, response.get_json()
        assert response.headers["Access-Control-Allow-Origin"] == ORIGIN

    def refresh(self) -> None:
        response = self.client.post("/api/v2/auth/refresh",
                                    json={"refresh_token": self.refresh_token})
        assert response.status_code == 200, response.get_json()
        self.refresh_token = response.get_json()["refresh_token"]

    def login_v1(self) -> None:
        self._login("/api/v1/auth/login")

    def login_v2(self) -> None:
        self._login()

    def login_page(self) -> None:
        response = self.pages.get("/login")
        assert response.status_code == 200

    def prepare_page_login(self) -> None:
        """A browser that has not signed in, holding the form's CSRF token (not counted)."""
        self.pages = self.app.test_client()
        page = self.pages.get("/login")
        found = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page.text)
        assert found, "no CSRF token on /login"
        self.page_token = found.group(1)

    def page_login(self) -> None:
        response = self.pages.post("/login", data={
            "csrf_token": self.page_token, "email": "ada@example.com", "password": PASSWORD})
        assert response.status_code in (302, 303), response.text[:500]

    def admin_list(self) -> None:
        response = self.client.get("/api/admin/v1/users",
                                   headers={"Authorization": f"Bearer {self.admin}"})
        assert response.status_code == 200, response.get_json()

    def admin_patch(self) -> None:
        response = self.client.patch(f"/api/admin/v1/users/{self.user_id}",
                                     json={"full_name": "Bob"},
                                     headers={"Authorization": f"Bearer {self.admin}"})
        assert response.status_code == 200, response.get_json()


# The hot paths: a name (the budgets' key), the request, what runs before each (not counted).
PATHS: dict[str, tuple[str, str | None]] = {
    "verify": ("verify", None),
    "verify_origin": ("verify_origin", None),
    "refresh": ("refresh", None),
    "login_v1": ("login_v1", None),
    "login_v2": ("login_v2", None),
    "login_page": ("login_page", None),
    "page_login": ("page_login", "prepare_page_login"),
    "admin_list": ("admin_list", None),
    "admin_patch": ("admin_patch", None),
}


def _fill_pool(app: Flask, connections: int = 4) -> None:
    """Open the connections a warmed-up worker holds: otherwise the first request that needs one
    while an outbox thread holds another opens it, and counts its ~37 calls as its own."""
    with app.app_context():
        opened = [db.engine.connect() for _ in range(connections)]
        for connection in opened:
            connection.close()


def costs(paths: HotPaths, name: str, times: int = COUNTED) -> list[Cost]:
    """The cost of `times` requests of the path `name`, after WARM_UP not counted."""
    method, before = PATHS[name]
    request = getattr(paths, method)
    prepare = getattr(paths, before) if before else (lambda: None)
    counter = Counter(paths.app)
    _fill_pool(paths.app)
    # Log records are made but handled by nobody: what handles them differs between a server and
    # pytest (which captures every record), and would count as the request's own calls.
    logging.disable(logging.CRITICAL)
    try:
        for _ in range(WARM_UP):
            prepare()
            request()
            prepare()
            request()
        found = []
        for _ in range(times):
            prepare()
            with counter.counting() as seen:
                request()
            prepare()
            # Garbage the earlier tests of this process left is collected now, not within the
            # request: its finalizers' calls would count as the request's (165 more in one run).
            gc.collect()
            gc.disable()
            profiler = cProfile.Profile()
            try:
                profiler.enable()
                request()
                profiler.disable()
            finally:
                gc.enable()
            stats: Any = pstats.Stats(profiler)
            found.append(Cost(list(seen), sum(entry[1] for entry in stats.stats.values())))
        return found
    finally:
        logging.disable(logging.NOTSET)
        counter.close()


def main() -> None:
    """Print every path's count, on the database SVC_TEST_DATABASE names first."""
    from tests.support import databases
    from tests.support.apps import FakeClock, build_app, dispose_app

    kind = databases.selected_kinds()[0]
    if kind != "sqlite":
        raise SystemExit("the table is printed on SQLite; the tests count on both")
    folder = Path(tempfile.mkdtemp(prefix="svc-counting-"))
    databases.build_schema(folder, f"sqlite:///{folder}/{databases.SQLITE_FILE}")
    app = build_app(folder / "app", FakeClock(), {}, f"sqlite:///{folder}/{databases.SQLITE_FILE}")
    try:
        paths = HotPaths(app)
        print("| path | SQL statements | Python calls | statements |")
        print("|---|---:|---:|---|")
        for name in PATHS:
            found = costs(paths, name)
            last = found[-1]
            calls = sorted({cost.calls for cost in found})
            counts = sorted({len(cost.statements) for cost in found})
            print(f"| {name} | {'/'.join(map(str, counts))} | {'/'.join(map(str, calls))} | "
                  f"{', '.join(last.statements)} |")
    finally:
        dispose_app(app)


if __name__ == "__main__":
    main()
