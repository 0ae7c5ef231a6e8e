"""The refusals of app/domain/sessions/errors.py: each with an error's status, a code and words."""

from __future__ import annotations

from app.domain.sessions import errors
from tests.support.refusals import check_refusals


def test_each_refusal_has_a_status_a_code_and_words() -> None:
    check_refusals(errors)
