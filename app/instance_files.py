"""Files that the embedded default creates once in its instance folder (secret key, signing keys).

Several gunicorn workers may start at the same moment on a fresh instance: each writes its candidate
to a private temporary file and tries to link it into place; link() fails when the name exists, so
exactly one candidate wins and every worker reads the winner.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def create_once(path: Path, make: Callable[[], bytes]) -> bytes:
    if path.exists():
        return path.read_bytes()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(make())
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return path.read_bytes()


def replace_atomically(path: Path, content: bytes) -> None:
    """Write a new version of a file so that readers see the old one or the new one, never half."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
