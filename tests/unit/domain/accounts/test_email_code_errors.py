"""The refusals of app/domain/accounts/email_code_errors.py: each with a status, a code, words."""

from __future__ import annotations

from app.domain.accounts import email_code_errors as errors
from tests.support.refusals import check_refusals


def test_each_refusal_has_a_status_a_code_and_words() -> None:
    check_refusals(errors)
