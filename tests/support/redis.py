"""A throwaway Redis server for the tests.

`start_redis(base_dir)` runs Debian's `redis-server` in the foreground on 127.0.0.1 on a free port,
with no persistence (`--save "" --appendonly no`), its output in `base_dir/redis.log`; it returns a
`RedisServer`. `stop()` takes it down and `start()` brings it back on the same port, for tests of
what the app does while Redis is away. Fixture:

- `redis_server` (session): the running server; one per test session. A test that stops it
  starts it again before it ends (in a `finally`), or the tests after it find no Redis.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from tests.support.servers import (
    INSTALL_HINT,
    LOOPBACK,
    InfraError,
    clean_env,
    free_port,
    log_tail,
    pdeathsig_prefix,
    port_is_free,
    stop_process,
)

START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0


def find_redis_server(path: str | None = None) -> Path:
    """The redis-server binary on PATH (or on `path`, os.pathsep-separated)."""
    found = shutil.which("redis-server", path=path)
    if found is None:
        raise InfraError(f"redis-server not found on PATH: {INSTALL_HINT}")
    return Path(found)


@dataclass
class RedisServer:
    """A Redis server on 127.0.0.1:`port`, no password, no persistence."""

    binary: Path
    base_dir: Path
    log_path: Path
    port: int
    host: str = LOOPBACK
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """redis://127.0.0.1:PORT/0"""
        return f"redis://{self.host}:{self.port}/0"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def client(self, **kwargs: Any) -> redis.Redis:
        """A new client that fails at once rather than retrying; the caller closes it (`with`)."""
        options: dict[str, Any] = {
            "socket_connect_timeout": 2, "socket_timeout": 5, "retry": Retry(NoBackoff(), 0),
        }
        options.update(kwargs)
        return redis.Redis(host=self.host, port=self.port, **options)

    def flush(self) -> None:
        """Empties every database (FLUSHALL)."""
        with self.client() as client:
            client.flushall()

    def start(self) -> None:
        """Starts the server on its port (again, after `stop()`); waits up to 10 s for PING.
        Does nothing if it is running. Raises InfraError, with the log, if it does not come up."""
        if self.running:
            return
        self.process = None
        cmd = [
            *pdeathsig_prefix(signal.SIGTERM),
            str(self.binary), "--port", str(self.port), "--bind", self.host,
            "--save", "", "--appendonly", "no", "--dir", str(self.base_dir),
            "--daemonize", "no", "--logfile", "", "--protected-mode", "yes",
        ]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                cwd=self.base_dir, env=clean_env(), start_new_session=True,
            )
        try:
            self._wait_for_ping(time.monotonic() + START_TIMEOUT)
        except BaseException:  # not up, or interrupted: leave no server behind
            proc, self.process = self.process, None
            if proc is not None:
                stop_process(proc, signal.SIGKILL, 5)
            raise

    def _wait_for_ping(self, deadline: float) -> None:
        assert self.process is not None
        while True:
            code = self.process.poll()
            if code is not None:
                self.process = None
                raise InfraError(
                    f"redis-server on port {self.port} exited with code {code}; its log "
                    f"{self.log_path}:\n{log_tail(self.log_path)}"
                )
            try:
                with self.client(socket_connect_timeout=1, socket_timeout=1) as client:
                    if client.ping():
                        return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise InfraError(
                    f"redis-server on port {self.port} did not answer PING within "
                    f"{START_TIMEOUT:.0f} s; its log {self.log_path}:\n{log_tail(self.log_path)}"
                )
            time.sleep(0.02)

    def stop(self) -> None:
        """Stops the server (SIGTERM, SIGKILL after 10 s); the port is kept for `start()`.
        Does nothing if it is not running."""
        proc, self.process = self.process, None
        if proc is not None:
            stop_process(proc, signal.SIGTERM, STOP_TIMEOUT)


def start_redis(base_dir: Path | str, port: int | None = None) -> RedisServer:
    """Starts redis-server on 127.0.0.1:`port` (a free port if None) with its files in
    `base_dir`; raises InfraError with the log if it does not answer PING within 10 s."""
    base = Path(base_dir).resolve()
    base.mkdir(parents=True, exist_ok=True)
    binary = find_redis_server()
    attempts = 1 if port is not None else 3  # a free port may be taken before redis binds it
    for attempt in range(attempts):
        server = RedisServer(
            binary=binary, base_dir=base, log_path=base / "redis.log", port=port or free_port()
        )
        try:
            server.start()
        except InfraError:
            if attempt + 1 == attempts or port_is_free(server.port):
                raise
            continue
        return server
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A Redis server for the whole test session (127.0.0.1, free port, no persistence).
    Fails, never skips, when redis-server is not installed."""
    server, error = None, ""
    try:
        server = start_redis(tmp_path_factory.mktemp("redis"))
    except InfraError as exc:
        error = str(exc)
    if server is None:
        pytest.fail(error, pytrace=False)  # outside the except: no chained traceback
    try:
        yield server
    finally:
        server.stop()
