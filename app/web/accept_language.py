"""Accept-Language read by its weights, then the RFC 4647 "lookup" (§3.4) over our languages: the
most preferred range that, shortened from the right, names a language we have wins, so
`es-MX,en;q=0.5` is Spanish and `de-CH,fr;q=0.5` German. A header we cannot read names nothing;
it never fails a request."""

from __future__ import annotations

import re
from collections.abc import Iterable

# RFC 4647 §2.1's language-range (with "_" read as "-", as some clients write it), and
# RFC 9110 §12.4.2's weight: q=0 to q=1 with at most three decimals.
_RANGE = re.compile(r"^(?:\*|[a-z]{1,8}(?:-[a-z0-9]{1,8})*)$")
_WEIGHT = re.compile(r"^q=(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$")
# A browser sends a handful; the rest of a longer header is read no further.
MOST_RANGES = 32


def ranges(untrusted_header: str | None) -> list[tuple[str, float]]:
    """The header's ranges, lower-case, most preferred first (equal weights in the header's
    order), each with its weight; a part that is no range, or whose weight is malformed, is
    left out."""
    found: list[tuple[str, float]] = []
    for part in (untrusted_header or "").split(",")[:MOST_RANGES]:
        tag, *parameters = [piece.strip() for piece in part.split(";")]
        tag = tag.lower().replace("_", "-")
        if not _RANGE.match(tag):
            continue
        weight = 1.0
        for parameter in parameters:
            compact = parameter.replace(" ", "").lower()
            if not compact.startswith("q="):
                continue  # another parameter: not ours to read
            if not _WEIGHT.match(compact):
                break
            weight = float(compact[2:])
        else:
            found.append((tag, weight))
    return sorted(found, key=lambda item: -item[1])  # sorted() keeps equal weights in order


def lookup(untrusted_header: str | None, ours: Iterable[str]) -> str | None:
    """Our language for the header by RFC 4647 lookup, or None when it names none of them (the
    caller's default then). A range of weight 0 is refused: it matches nothing, and a language
    it names exactly is not reached by shortening a longer range either ("de-CH, de;q=0")."""
    have = {code.lower(): code for code in ours}
    weighed = ranges(untrusted_header)
    refused = {tag for tag, weight in weighed if weight == 0}
    for tag, weight in weighed:
        if weight == 0:
            break  # sorted: the rest are refused too
        if tag == "*":
            continue  # "any": says nothing about which; the ranges after it may (§3.4)
        subtags = tag.split("-")
        while subtags:
            candidate = "-".join(subtags)
            if candidate in have and candidate not in refused:
                return have[candidate]
            subtags.pop()
            if len(subtags) > 1 and len(subtags[-1]) == 1:
                subtags.pop()  # a singleton (x-, u-) is never left at the end (§3.4)
    return None
