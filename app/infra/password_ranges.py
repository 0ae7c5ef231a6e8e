"""Fetching one range of a breached-password range API (the "Pwned Passwords" format): the
hashes in it that start with a five-character prefix. Deciding nothing: whether a password may
be used is the domain's rule (app/domain/accounts/breached.py)."""

from __future__ import annotations

import requests


class Unavailable(Exception):
    """The range could not be read: no answer in time, no connection, or not a 200."""


def suffixes(base_url: str, prefix: str, timeout: float) -> frozenset[str]:
    """The hash suffixes (upper-case hex) listed under `prefix` with a count above 0.

    `Add-Padding: true` asks the API to add made-up suffixes with a count of 0, so that the
    answer's size does not tell which range was asked for; those are left out here."""
    try:
        with requests.get(f"{base_url.rstrip('/')}/{prefix}", timeout=timeout,
                          headers={"Add-Padding": "true"}, allow_redirects=False) as response:
            if response.status_code != 200:
                raise Unavailable(f"HTTP {response.status_code}")
            text = response.text
    except requests.RequestException as error:
        raise Unavailable(type(error).__name__) from None
    found = set()
    for line in text.splitlines():
        suffix, _, count = line.strip().partition(":")
        count = count.strip()
        if count.isascii() and count.isdigit() and int(count) > 0:  # ("²" is a digit too)
            found.add(suffix.upper())
    return frozenset(found)
