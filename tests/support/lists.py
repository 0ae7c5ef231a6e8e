"""The committed lists that only shrink (tests/unmirrored.txt, tests/helpers_twice.txt)."""

from __future__ import annotations

from pathlib import Path


def listed(path: Path) -> set[str]:
    """The lines of `path`, less blank lines and `#` comments."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}
