"""Shared by the contract fuzzers: the app they run against (tests/support/contract.py). The
summary of what they ran is printed by tests/conftest.py (under pytest-xdist the main process
loads no conftest but that one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask

from tests.support.apps import dispose_app
from tests.support.contract import build_contract_app


@pytest.fixture(scope="module")
def contract_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """One app for a whole module: what the fuzzers create accumulates, as in a running
    service."""
    app = build_contract_app(tmp_path_factory.mktemp("contract"))
    yield app
    dispose_app(app)

