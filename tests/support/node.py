"""Node packages the tests use (the OpenID Connect stand-in, axe-core), installed on demand."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

NPM_CI_TIMEOUT = 300.0


class NpmError(RuntimeError):
    """`npm ci` could not run or failed; the message carries its output."""


def npm_ci(folder: Path) -> None:
    """`npm ci` in `folder` when node_modules is missing or older than the lock file."""
    lock = folder / "package-lock.json"
    stamp = folder / "node_modules" / ".package-lock.json"  # npm writes it on each install

    def stale() -> bool:
        return not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime

    if not stale():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise NpmError(f"npm is not on PATH: Node.js and npm are needed for {folder.name}")
    with open(lock, "rb") as lock_file:  # two pytest runs at once: one `npm ci`
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            if not stale():
                return
            try:
                result = subprocess.run(
                    [npm, "ci", "--no-audit", "--no-fund"], cwd=folder,
                    stdin=subprocess.DEVNULL, capture_output=True, text=True,
                    timeout=NPM_CI_TIMEOUT, check=False,
                    env={**os.environ, "npm_config_update_notifier": "false"},
                )
            except subprocess.TimeoutExpired as exc:
                raise NpmError(f"`npm ci` in {folder} took more than {NPM_CI_TIMEOUT:.0f}s") \
                    from exc
            if result.returncode != 0:
                raise NpmError(f"`npm ci` in {folder} failed ({result.returncode}):\n"
                               f"{result.stdout}\n{result.stderr}")
            stamp.touch()  # npm keeps the packages' own times; make the stamp newer than the lock
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)
