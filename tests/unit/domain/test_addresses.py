"""One canonical form of an address (issue 12, item 2): the domain in IDNA ASCII, ASCII letters
lower-cased, everything else kept, so that `ß`/`ss`, `ς`/`σ` and look-alikes never collide."""

import pytest

from app.domain import addresses
from app.domain.errors import InvalidBody


@pytest.mark.parametrize(("typed", "stored"), [
    ("Ada@Example.COM", "ada@example.com"),
    ("  ada@example.com ", "ada@example.com"),
    ("ada@Straße.de", "ada@xn--strae-oqa.de"),
    ("ada@xn--strae-oqa.de", "ada@xn--strae-oqa.de"),
    ("ada@BÜCHER.de", "ada@xn--bcher-kva.de"),
    ("Straße@example.com", "straße@example.com"),
    ("ÄDA@example.com", "Äda@example.com"),  # only ASCII letters are lower-cased
    ("x@ς.gr", "x@xn--3xa.gr"),
    ("a\u0301@example.com", "\u00e1@example.com"),  # NFC, as RFC 6532 asks
])
def test_the_canonical_form(typed, stored):
    assert addresses.canonical(typed) == stored


@pytest.mark.parametrize(("one", "other"), [
    ("ada@straße.de", "ada@strasse.de"),
    ("straße@example.com", "strasse@example.com"),
    ("x@ς.gr", "x@σ.gr"),
    ("ςx@example.com", "σx@example.com"),
    ("ａｄａ@example.com", "ada@example.com"),  # fullwidth
    ("\u0430da@example.com", "ada@example.com"),  # Cyrillic а
    ("Äda@example.com", "äda@example.com"),
])
def test_look_alikes_and_case_foldings_are_different_addresses(one, other):
    assert addresses.canonical(one) != addresses.canonical(other)
    assert addresses.key(one) != addresses.key(other)


@pytest.mark.parametrize("hostile", ["ada@example.com\u202e", "ad\u2066a@example.com",
                                     "ada\x00@example.com", "ada@exa\x1bmple.com",
                                     "not an address", "a" * 250 + "@example.com"])
def test_what_is_no_address_is_refused_with_a_pointer(hostile):
    with pytest.raises(InvalidBody) as refused:
        addresses.canonical(hostile, pointer="#/email")
    assert refused.value.errors[0]["pointer"] == "#/email"


@pytest.mark.parametrize("anything", ["", "not an address", "\udcff@x", "ADA@", "a\x00b"])
def test_a_key_is_made_for_any_string_and_never_equals_a_stored_address(anything):
    key = addresses.key(anything)
    assert isinstance(key, str)
    with pytest.raises(InvalidBody):
        addresses.canonical(key)
