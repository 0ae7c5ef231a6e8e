"""Fetching one range of a breached-password range API (the "Pwned Passwords" format): the
hashes in it that start with a five-character prefix. Deciding nothing: whether a password may
be used is the domain's rule (app/domain/accounts/breached.py)."""

from __future__ import annotations

import time

import requests

# A real range, padded, is under 100 kB: a larger answer is not one (and is not read on).
MAX_ANSWER_BYTES = 1 << 20


class Unavailable(Exception):
    """The range could not be read: no answer in time, no connection, or not a 200."""


def suffixes(base_url: str, prefix: str, timeout: float) -> frozenset[str]:
    """The hash suffixes (upper-case hex) listed under `prefix` with a count above 0.

    `Add-Padding: true` asks the API to add made-up suffixes with a count of 0, so that the
    answer's size does not tell which range was asked for; those are left out here."""
    # `timeout` bounds each wait for a byte; the deadline bounds the whole answer, which a server
    # sending a byte at a time would otherwise stretch without end.
    deadline = time.monotonic() + timeout
    try:
        with requests.get(f"{base_url.rstrip('/')}/{prefix}", timeout=timeout, stream=True,
                          headers={"Add-Padding": "true"}, allow_redirects=False) as response:
            if response.status_code != 200:
                raise Unavailable(f"HTTP {response.status_code}")
            body = bytearray()
            # read1: what has arrived, up to the size (iter_content waits for the whole size).
            while chunk := response.raw.read1(65536, decode_content=True):
                body += chunk
                if len(body) > MAX_ANSWER_BYTES:
                    raise Unavailable("an answer too large for a range")
                if time.monotonic() > deadline:
                    raise Unavailable("no whole answer in time")
    except requests.RequestException as error:
        raise Unavailable(type(error).__name__) from None
    text = body.decode("utf-8", "replace")
    found = set()
    for line in text.splitlines():
        suffix, _, count = line.strip().partition(":")
        count = count.strip()
        if count.isascii() and count.isdigit() and int(count) > 0:  # ("²" is a digit too)
            found.add(suffix.upper())
    return frozenset(found)
