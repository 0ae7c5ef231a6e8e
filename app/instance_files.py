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


def private_folder(path: Path) -> None:
    """Create the instance folder readable by its owner alone (0700): the database beside the
    keys holds password hashes and addresses, and SQLite makes its -wal and -shm files there.
    A folder that exists is left as it is (an operator may have chosen its mode)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def private_file(path: Path) -> None:
    """Create an empty file readable by its owner alone (0600), unless it exists. SQLite opens
    an empty file as an empty database; left to create it, it would use the umask's 0644 (and
    give the same mode to its -wal and -shm files)."""
    private_folder(path.parent)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def create_once(path: Path, make: Callable[[], bytes]) -> bytes:
    if path.exists():
        return path.read_bytes()
    private_folder(path.parent)
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
