"""Accept-Language by its weights, then the RFC 4647 lookup (app/web/accept_language.py): the most
preferred range that names one of our languages, once shortened from the right, wins."""

from __future__ import annotations

import pytest

from app.web.accept_language import lookup, ranges
from app.web.locale import CODES
from tests.unit.pages.test_language import lang_of


@pytest.mark.parametrize(("header", "expected"), [
    # The two: a less preferred exact match no longer beats the preferred language.
    ("es-MX,en;q=0.5", "es"),
    ("de-CH,fr;q=0.5", "de"),
    # By weight, not by place; equal weights in the header's order.
    ("fr;q=0.4, de;q=0.9", "de"),
    ("fr, de", "fr"),
    ("de;q=0.5, fr;q=0.5", "de"),
    ("en-US,en;q=0.9,de;q=0.8", "en"),
    # Shortened from the right, subtag by subtag, a singleton never left at the end.
    ("zh-Hant-TW, es-419;q=0.8", "es"),
    ("de-Latn-DE-x-private", "de"),
    ("DE-ch", "de"),
    ("de_AT", "de"),
    # Nothing of ours: no language (the caller's default).
    ("ja, zh;q=0.5", None),
    ("", None),
    (None, None),
    # q=0 means "not this one", also when a longer range would reach it by shortening.
    ("de;q=0, fr;q=0.1", "fr"),
    ("de-CH, de;q=0, es;q=0.3", "es"),
    ("fr;q=0", None),
    # "*" says nothing about which: the ranges after it still count; alone it is the default.
    ("*", None),
    ("*, es;q=0.5", "es"),
    ("ja, *;q=0.8, de;q=0.1", "de"),
])
def test_lookup_follows_weights_then_truncation(header, expected):
    assert lookup(header, CODES) == expected


@pytest.mark.parametrize("header", [
    "de;q=2", "de;q=-1", "de;q=0.12345", "de;q=x", "de;q=", "d e", "de--ch", "12",
    "de-abcdefghi", ";q=1", ",,,", ";;;", "de;q=1;q=x", "\x00de", "dé", "<script>",
    "de;q=1;q=0.5x", "x" * 10_000, ",".join(["ja"] * 10_000) + ",de",
])
def test_a_malformed_part_names_nothing_and_never_raises(header):
    assert lookup(header, CODES) is None


def test_a_malformed_part_leaves_the_well_formed_ones():
    assert lookup("de;q=2, fr;q=0.5", CODES) == "fr"
    assert lookup("d e, es;q=0.3, fr;q=0.1", CODES) == "es"
    assert ranges("fr-CA;q=0.9, *;q=0.1, en;level=1") == [
        ("en", 1.0), ("fr-ca", 0.9), ("*", 0.1)]


@pytest.mark.parametrize(("header", "expected"), [
    ("es-MX,en;q=0.5", "es"), ("de-CH,fr;q=0.5", "de"), ("ja", "en"), ("de;q=0", "en")])
def test_the_pages_speak_the_language_looked_up(client, header, expected):
    assert lang_of(client.get("/login", headers={"Accept-Language": header})) == expected


@pytest.mark.parametrize("header", ["de;q=2", "\x7f\x7f", "x" * 6000, ";" * 3000 + "de"])
def test_a_malformed_header_is_no_error_on_a_page(client, header):
    page = client.get("/login", headers={"Accept-Language": header})
    assert page.status_code == 200 and lang_of(page) == "en"
