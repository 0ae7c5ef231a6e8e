"""Which database each test runs on, and its own fresh copy of the schema.

SVC_TEST_DATABASE names the kinds a run uses: `sqlite` (the default), `postgresql`, or both,
comma-separated, as `make test` runs them in one session. With both, every app-factory test of
POSTGRES_SUITE runs once on each (its id ends in `[sqlite]` or `[postgresql]`) and every other test
on SQLite alone; a test that does not use a database runs once.

A test's database holds the models' tables from the start: it is a copy of a template built once
a session (once per pytest-xdist worker), a file copy on SQLite and a CREATE DATABASE ... TEMPLATE
on PostgreSQL, where creating every table for every test used to cost more than most tests.
"""

from __future__ import annotations

import os
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from app.extensions import db
from tests.support.apps import FakeClock, build_app, dispose_app

KINDS = ("sqlite", "postgresql")

# The tests that `make test` runs on PostgreSQL too (node id prefixes): the API, the pages, the
# OAuth and OpenID Connect flows, recovery, the domain, and the top-level modules.
POSTGRES_SUITE = tuple(f"tests/{name}/" for name in (
    "api", "captcha", "oauth", "oidc", "recovery", "pages", "domain")) + ("tests/test_",)

SQLITE_FILE = "test.db"

# The user property of a test's report that names its database: a report reaches the main process
# from a pytest-xdist worker, and the summary at the end of the run counts by it.
PROPERTY = "database"


def selected_kinds() -> tuple[str, ...]:
    """The kinds SVC_TEST_DATABASE names, in the order of KINDS."""
    named = {kind.strip() for kind in os.environ.get("SVC_TEST_DATABASE", "sqlite").split(",")}
    unknown = named - set(KINDS) - {""}
    if unknown:
        raise ValueError(f"SVC_TEST_DATABASE: unknown {sorted(unknown)}; choose from {KINDS}")
    return tuple(kind for kind in KINDS if kind in named) or ("sqlite",)


def kinds_for(nodeid: str) -> tuple[str, ...]:
    """The kinds the test `nodeid` runs on: one unless the run has several and it is in
    POSTGRES_SUITE."""
    kinds = selected_kinds()
    if len(kinds) > 1 and not nodeid.startswith(POSTGRES_SUITE):
        return ("sqlite",)
    return kinds


def build_schema(directory: Path, url: str) -> None:
    """Creates the models' tables in the empty database `url`, through an app as the tests
    build it (its instance folder in `directory`)."""
    app = build_app(directory / "instance", FakeClock(), {}, url)
    with app.app_context():
        db.create_all()
    dispose_app(app)


def sqlite_copy(template: Path, directory: Path) -> str:
    """The URL of a copy of the SQLite `template` in `directory`."""
    target = directory / SQLITE_FILE
    shutil.copyfile(template, target)
    return f"sqlite:///{target}"


def record(node: pytest.Item, kind: str) -> None:
    node.user_properties.append((PROPERTY, kind))


def summary(stats: dict[str, list[Any]]) -> list[str]:
    """One line per database (and one for the tests without one): how many tests ran on it and
    the time they took, setting up, running and tearing down, added up over the workers."""
    tests: dict[str, set[str]] = defaultdict(set)
    seconds: dict[str, float] = defaultdict(float)
    for reports in stats.values():
        for report in reports:
            if not hasattr(report, "duration") or not getattr(report, "nodeid", ""):
                continue
            kind = dict(getattr(report, "user_properties", ())).get(PROPERTY, "no database")
            tests[kind].add(report.nodeid)
            seconds[kind] += report.duration
    order = [*KINDS, "no database"]
    return [f"{kind:<12} {len(tests[kind]):5d} tests {seconds[kind]:8.1f} s"
            for kind in order if tests[kind]]
