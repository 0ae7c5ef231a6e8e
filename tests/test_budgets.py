"""Each hot path within its budget (tests/budgets.toml): the SQL statements and the Python calls
one request costs, counted after a warm-up, never timed, so that a change that makes a hot path
do more fails here whatever the machine's load (tests/support/counting.py)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.support.counting import PATHS, HotPaths, costs

BUDGETS: dict[str, dict[str, Any]] = tomllib.loads(
    (Path(__file__).parent / "budgets.toml").read_text())


def test_every_hot_path_has_a_budget() -> None:
    assert set(BUDGETS) == set(PATHS)
    for name, budget in BUDGETS.items():
        assert {"statements", "calls", "set_from"} <= set(budget), name


@pytest.mark.parametrize("name", list(PATHS))
def test_within_budget(app: Flask, database: str, name: str) -> None:
    budget = BUDGETS[name]
    found = costs(HotPaths(app), name)
    statements = max(found, key=lambda cost: len(cost.statements)).statements
    assert len(statements) <= budget["statements"], (
        f"{name} ran {len(statements)} statements, over its budget of {budget['statements']} "
        f"(tests/budgets.toml): {statements}")
    if database == "sqlite":  # the drivers' own Python differs; the budget is SQLite's
        calls = max(cost.calls for cost in found)
        assert calls <= budget["calls"], (
            f"{name} made {calls:,} Python calls, over its budget of {budget['calls']:,} "
            f"(tests/budgets.toml); its statements: {statements}")
