"""Shared by the contract fuzzers: the app they run against (tests/support/contract.py), and the
summary of what they ran, printed at the end of the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from tests.support.apps import dispose_app
from tests.support.contract import FUZZ_SUMMARY, build_contract_app


@pytest.fixture(scope="module")
def contract_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """One app for a whole module: what the fuzzers create accumulates, as in a running
    service."""
    app = build_contract_app(tmp_path_factory.mktemp("contract"))
    yield app
    dispose_app(app)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    lines = [str(value) for reports in terminalreporter.stats.values() for report in reports
             if getattr(report, "when", None) == "call"
             for name, value in getattr(report, "user_properties", ()) if name == FUZZ_SUMMARY]
    if lines:
        terminalreporter.section("contract fuzzing")
        for line in lines:
            terminalreporter.write_line(line)
