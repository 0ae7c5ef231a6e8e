"""The primitive of mailed codes and links (app/domain/accounts/email_codes.py): single use,
minutes-long, a bounded number of tries per code however many come at once, the link bound to
the browser that asked and changed by nothing but its redemption."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from app.domain import retention
from app.domain.accounts import email_codes
from app.extensions import db
from app.models import EmailCode
from tests.support import races

PURPOSE = email_codes.SIGN_IN


@pytest.fixture
def settings() -> dict[str, Any]:
    return {**races.POOL}


def _issue(app: Flask, email: str = "ada@example.com", browser: str | None = None
           ) -> email_codes.Issued:
    with app.app_context():
        issued = email_codes.issue(email, PURPOSE, browser)
        db.session.commit()
        return issued


def _redeem_code(app: Flask, code: str, email: str = "ada@example.com") -> bool:
    with app.app_context():
        return email_codes.redeem(email, code, PURPOSE)


def _wrong(code: str) -> str:
    return str((int(code) + 1) % 10**email_codes.DIGITS).zfill(email_codes.DIGITS)


def test_a_code_works_once_for_its_address(app: Flask) -> None:
    issued = _issue(app)
    assert len(issued.code) == email_codes.DIGITS and issued.code.isdigit()
    assert not _redeem_code(app, issued.code, "bob@example.com")
    assert _redeem_code(app, f"{issued.code[:4]} {issued.code[4:]}", "Ada@Example.com")
    assert not _redeem_code(app, issued.code)  # replay


def test_a_code_dies_when_its_minutes_are_over(app: Flask, clock: Any) -> None:
    issued = _issue(app)
    clock.advance(email_codes.TTL.total_seconds())
    assert not _redeem_code(app, issued.code)


def test_a_new_code_replaces_the_old(app: Flask) -> None:
    first = _issue(app)
    second = _issue(app)
    assert not _redeem_code(app, first.code)
    assert _redeem_code(app, second.code)


def test_wrong_codes_use_up_the_tries_and_then_the_right_one_fails(app: Flask) -> None:
    issued = _issue(app)
    for _ in range(email_codes.MAX_ATTEMPTS):
        assert not _redeem_code(app, _wrong(issued.code))
    assert not _redeem_code(app, issued.code)


def test_malformed_codes_are_refused_without_a_try(app: Flask) -> None:
    issued = _issue(app)
    for typed in ("", "abc", "1" * 9, "１２３４５６７８", "\ud800" * 8):
        assert not _redeem_code(app, typed)
    assert _redeem_code(app, issued.code)


def test_parallel_guesses_get_no_more_tries_than_one_after_another(
        app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    issued = _issue(app)
    with races.burst(monkeypatch, email_codes, "_code_hash") as burst:
        answers = burst.send(lambda i: _redeem_code(app, _wrong(issued.code)))
    assert answers == [False] * races.BURST
    assert burst.checked == email_codes.MAX_ATTEMPTS
    assert not _redeem_code(app, issued.code)
    with app.app_context():
        row = db.session.get(EmailCode, ("ada@example.com", PURPOSE))
        assert row is not None and row.attempts == email_codes.MAX_ATTEMPTS


def test_parallel_right_codes_sign_in_once(app: Flask) -> None:
    issued = _issue(app)
    answers = races.all_at_once(8, lambda i: _redeem_code(app, issued.code))
    assert sorted(answers) == [False] * 7 + [True]


def test_the_link_is_looked_at_without_change_and_redeemed_in_the_asking_browser_only(
        app: Flask) -> None:
    issued = _issue(app, browser="asking-browser")
    with app.app_context():
        for _ in range(3):  # a mail scanner, a preview, the person
            looked = email_codes.look(issued.link, PURPOSE, None)
            assert looked is not None and looked.code == issued.code
            assert not looked.same_browser
        assert email_codes.redeem_link(issued.link, PURPOSE, "another-browser") is None
        assert email_codes.redeem_link(issued.link, PURPOSE, None) is None
        assert email_codes.redeem_link(issued.link, "other", "asking-browser") is None
        assert email_codes.redeem_link(issued.link, PURPOSE, "asking-browser") == "ada@example.com"
        assert email_codes.redeem_link(issued.link, PURPOSE, "asking-browser") is None
        assert email_codes.look(issued.link, PURPOSE, "asking-browser") is None
    assert not _redeem_code(app, issued.code)  # the code went with its link


def test_a_link_asked_through_the_api_never_signs_in(app: Flask) -> None:
    issued = _issue(app)
    with app.app_context():
        looked = email_codes.look(issued.link, PURPOSE, None)
        assert looked is not None and not looked.same_browser
        assert email_codes.redeem_link(issued.link, PURPOSE, "") is None
    assert _redeem_code(app, issued.code)


def test_the_table_holds_no_code_and_no_link(app: Flask) -> None:
    issued = _issue(app, browser="asking-browser")
    with app.app_context():
        row = db.session.get(EmailCode, ("ada@example.com", PURPOSE))
        assert row is not None
        stored = " ".join(str(value) for value in vars(row).values())
        for secret in (issued.code, issued.link, "asking-browser"):
            assert secret not in stored


def test_the_purge_drops_expired_codes_only(app: Flask, clock: Any) -> None:
    _issue(app, "old@example.com")
    clock.advance(email_codes.TTL.total_seconds() + 1)
    fresh = _issue(app, "new@example.com")
    with app.app_context():
        assert retention.purge_email_codes() == 1
        assert [row.email_key for row in db.session.query(EmailCode)] == ["new@example.com"]
    assert _redeem_code(app, fresh.code, "new@example.com")
