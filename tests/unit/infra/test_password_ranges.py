"""The range API's answer read (app/infra/password_ranges.py), against the local stand-in."""

from __future__ import annotations

import pytest

from app.infra import password_ranges
from tests.support.password_ranges import (
    BREACHED,
    PADDED,
    RangeStandIn,
    breached_range,  # noqa: F401 (a fixture)
    sha1,
)


def test_listed_suffixes_without_the_padding(breached_range: RangeStandIn):  # noqa: F811
    listed = password_ranges.suffixes(breached_range.url, sha1(BREACHED)[:5], 2.0)
    assert listed == {sha1(BREACHED)[5:]}
    padded = password_ranges.suffixes(breached_range.url + "/", sha1(PADDED)[:5], 2.0)
    assert padded == frozenset()
    assert [headers["add-padding"] for _, headers in breached_range.requests] == ["true"] * 2
    assert breached_range.paths == [f"/range/{sha1(BREACHED)[:5]}", f"/range/{sha1(PADDED)[:5]}"]


def test_an_error_status_or_no_answer_is_unavailable(breached_range: RangeStandIn):  # noqa: F811
    breached_range.down = True
    with pytest.raises(password_ranges.Unavailable, match="HTTP 503"):
        password_ranges.suffixes(breached_range.url, "ABCDE", 2.0)
    breached_range.down, breached_range.hang = False, True
    with pytest.raises(password_ranges.Unavailable, match="Timeout"):
        password_ranges.suffixes(breached_range.url, "ABCDE", 0.2)


def test_lines_that_are_not_a_suffix_and_a_count_are_left_out(
        breached_range: RangeStandIn, monkeypatch):  # noqa: F811
    monkeypatch.setattr(breached_range, "answer", lambda path, headers: (
        200, "AAA:2\r\nBBB:x\r\nCCC:\u00b2\r\n\r\nno colon\r\nddd: 7 \r\nEEE:0"))
    assert password_ranges.suffixes(breached_range.url, "ABCDE", 2.0) == {"AAA", "DDD"}


def test_an_answer_too_large_or_never_ending_is_unavailable(
        breached_range: RangeStandIn, monkeypatch):  # noqa: F811
    monkeypatch.setattr(breached_range, "answer", lambda path, headers: (
        200, "AAA:1\r\n" * (password_ranges.MAX_ANSWER_BYTES // 7 + 1)))
    with pytest.raises(password_ranges.Unavailable, match="too large"):
        password_ranges.suffixes(breached_range.url, "ABCDE", 5.0)
    monkeypatch.undo()
    breached_range.drip = True  # a byte every 50 ms: no single wait is long, the whole is
    with pytest.raises(password_ranges.Unavailable, match="in time"):
        password_ranges.suffixes(breached_range.url, "ABCDE", 0.5)
