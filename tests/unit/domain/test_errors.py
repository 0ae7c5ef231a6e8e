"""app/domain/errors.py's refusals, and what holds across every room's: a code means one status,
so a site that matches on the code never meets it with two meanings."""

from __future__ import annotations

import importlib
import pkgutil
from collections import defaultdict

import app.domain
from app.domain import errors
from tests.support.refusals import check_refusals, refusals_of


def test_each_base_refusal_has_a_status_a_code_and_words() -> None:
    check_refusals(errors)


def test_a_code_has_one_status_in_every_room() -> None:
    # (A base that sets only its status, as tokens' BearerError, names no code: its kinds do.)
    statuses: dict[str, set[int]] = defaultdict(set)
    for module in pkgutil.walk_packages(app.domain.__path__, "app.domain."):
        if module.name.endswith("errors"):
            for cls in refusals_of(importlib.import_module(module.name)):
                if "code" in vars(cls) or "status" not in vars(cls):
                    statuses[cls.code].add(cls.status)
    assert len(statuses) > 40  # every room's refusals were found
    assert {code: found for code, found in statuses.items() if len(found) > 1} == {}
