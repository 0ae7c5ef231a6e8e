"""The characters we accept in what people type and what providers tell us, for the API's
schemas, the hosted forms and provider profiles alike.

No control character (C0, DEL, C1) and no bidirectional formatting character in anything that
names or identifies: PostgreSQL cannot even store a NUL, CR/LF and ESC forge log lines and
terminal output, and bidi overrides make an address or a name read as something it is not.
Passwords may hold any character but NUL (no keyboard types one).
"""

from __future__ import annotations

import re

CONTROL_CHARACTERS = r"\x00-\x1f\x7f-\x9f"  # a regular-expression character range
# Embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069): the characters of
# "Trojan Source" spoofing. Escapes that Python's and pydantic's (Rust) regexes both read.
BIDI_CONTROLS = r"\u202a-\u202e\u2066-\u2069"
UNSAFE = CONTROL_CHARACTERS + BIDI_CONTROLS
PRINTABLE = f"^[^{UNSAFE}]*$"  # for pydantic's (Rust) patterns, where $ ends the text
NO_NUL = r"^[^\x00]*$"
# Python's `$` matches before a final line break too: its own checks end at \Z.
PRINTABLE_TEXT = re.compile(f"^[^{UNSAFE}]*\\Z")

_UNSAFE_RUN = re.compile(f"[{UNSAFE}\\s]+")


def is_printable(untrusted: str) -> bool:
    return PRINTABLE_TEXT.match(untrusted) is not None


def cleaned(untrusted: str, max_length: int) -> str:
    """Text from someone we cannot ask to type it again (a provider's display name): every run
    of unsafe characters and white space becomes one space, then it is cut to `max_length`."""
    return _UNSAFE_RUN.sub(" ", untrusted).strip()[:max_length].strip()


class Words(str):
    """English words for a person (an error's detail), as the API says them, that also keep
    their message and values: the hosted pages say them in the person's language
    (app/pages/blueprint.py `words`). `N_` marks the message for `make translations`."""

    message: str
    values: dict[str, object]

    def __new__(cls, message: str, **values: object) -> Words:
        said = super().__new__(cls, message % values if values else message)
        said.message, said.values = message, values
        return said


def N_(message: str, **values: object) -> Words:  # noqa: N802  (gettext's name for "mark only")
    return Words(message, **values)
