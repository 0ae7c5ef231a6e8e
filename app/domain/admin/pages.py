"""Keyset pagination: a page of rows after an opaque cursor, in a stable order, so that rows
added while a client pages through neither repeat nor push others out of sight."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from app.domain import text
from app.domain.errors import InvalidQuery

T = TypeVar("T")
MAX_PAGE = 100
DEFAULT_PAGE = 50


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def page_size(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_PAGE
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidQuery(f"limit is from 1 to {MAX_PAGE}.",
                          [{"pointer": "#/limit", "detail": f"from 1 to {MAX_PAGE}"}])
    return limit


def cursor_of(position: list[str | int]) -> str:
    return base64.urlsafe_b64encode(json.dumps(position).encode()).decode().rstrip("=")


def _in_range(value: object) -> bool:
    """What a database column can hold: an integer of 64 bits, a short printable string (no
    NUL: PostgreSQL cannot compare one)."""
    if isinstance(value, int):
        return 0 <= value < 2**63
    return isinstance(value, str) and len(value) <= 64 and text.is_printable(value)


def position_of(untrusted_cursor: str | None, shape: tuple[type, ...]) -> list[str | int] | None:
    """The position a cursor of ours stands for, checked against the types it must hold;
    InvalidQuery for anything else."""
    if not untrusted_cursor:
        return None
    try:
        padded = untrusted_cursor + "=" * (-len(untrusted_cursor) % 4)
        position = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
    except (ValueError, UnicodeError):
        position = None
    if not isinstance(position, list) or len(position) != len(shape) or not all(
            type(value) is kind and _in_range(value)
            for value, kind in zip(position, shape, strict=True)):
        raise InvalidQuery("The cursor is not one this service gave.",
                          [{"pointer": "#/cursor", "detail": "not a cursor of ours"}])
    return position


def moment_of(untrusted: str) -> datetime:
    """The instant a cursor of ours holds (ISO 8601, with its offset); InvalidQuery otherwise."""
    try:
        at = datetime.fromisoformat(untrusted)
    except ValueError:
        at = None
    if at is None or at.tzinfo is None:
        raise InvalidQuery("The cursor is not one this service gave.",
                          [{"pointer": "#/cursor", "detail": "not a cursor of ours"}])
    return at
