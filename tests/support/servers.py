"""Throwaway servers for the tests: PostgreSQL (`tests.support.postgres`) and Redis (`.redis`).

Each module has a plain function that starts a server in a folder and returns a handle
(`start_postgres`, `start_redis`) and pytest fixtures built on it (`postgres_server`,
`fresh_postgres_url`; `redis_server`). The servers listen on 127.0.0.1 only, on a free port, write
their output to a log file in their folder, and are stopped when the session ends.

The binaries come from Debian's packages: `scripts/install-test-tools` installs what is missing.
A missing binary makes the fixture fail (never skip) with a message that says so.

To use the fixtures in a test module, register the modules as pytest plugins, e.g. in the root
`tests/conftest.py`:

    pytest_plugins = ["tests.support.postgres", "tests.support.redis"]
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from pathlib import Path

INSTALL_HINT = "run scripts/install-test-tools (it installs PostgreSQL, Redis and Chromium)"
LOOPBACK = "127.0.0.1"


class InfraError(RuntimeError):
    """A test server could not be found, started or stopped."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
        return True


def log_tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(no log: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


def pdeathsig_prefix(sig: signal.Signals) -> list[str]:
    """A `setpriv` prefix that has the kernel send `sig` to the server if this process dies
    without running its teardown (killed, crashed), so no server outlives the test run.
    Empty where util-linux's setpriv is missing: the server then relies on teardown alone."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return []
    return [setpriv, f"--pdeathsig={sig.name.removeprefix('SIG')}", "--"]


def stop_process(proc: subprocess.Popen[bytes], sig: signal.Signals, timeout: float) -> None:
    """Send `sig`, wait up to `timeout` s, then SIGKILL and wait again (bounded)."""
    if proc.poll() is None:
        proc.send_signal(sig)  # a no-op if it has just exited
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def clean_env() -> dict[str, str]:
    """The environment for a server: ours without libpq's PG* variables, in the C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["LC_ALL"] = "C"
    return env
