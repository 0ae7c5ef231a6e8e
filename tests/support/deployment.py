"""Production-shape deployments: gunicorn instances of svc-auth on one PostgreSQL database (and
Redis), over HTTP on 127.0.0.1 (tests/system/production).

tests/support/sqlite_server.py serves a SQLite file that it migrates itself; here the database is
a PostgreSQL one, migrated once (`migrate`) however many instances then serve it
(`start_instance`, or `start_instances` to start several at once). Each instance is a real
`gunicorn wsgi:app` with its own work folder, error log (the app's log goes there too) and
access log, which records the worker that answered each request carrying an `X-E2E-Id` header.
"""

from __future__ import annotations

import json
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.support.http import wait_until
from tests.support.server import Gunicorn, flask_cli, service_environment, start_gunicorn
from tests.support.servers import LOOPBACK, clean_env, pdeathsig_prefix

if TYPE_CHECKING:
    from tests.support.postgres import PostgresServer

NEW_PASSWORD = "a quite different passphrase"
STARTUP_TIMEOUT = 60.0


def es256_pem() -> str:
    """A new ES256 private key as PKCS#8 PEM, the form SVC_JWT_KEYS takes."""
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def shared_settings(database_url: str, redis_url: str | None = None) -> dict[str, str]:
    """What every instance of one deployment shares: database, Redis, secret, key, issuer."""
    env = {
        "SVC_DATABASE_URL": database_url,
        "SVC_SECRET_KEY": uuid.uuid4().hex + uuid.uuid4().hex,
        "SVC_JWT_KEYS": json.dumps([es256_pem()]),
        "SVC_PUBLIC_URL": "http://auth.svc.test",
    }
    if redis_url:
        env["SVC_REDIS_URL"] = redis_url
    return env


def _environment(instance_path: Path, overrides: dict[str, str]) -> dict[str, str]:
    return service_environment(instance_path, overrides, drop=("SVC_", "PG"))


def cli(workdir: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """`flask --app wsgi ARGS` with a deployment's settings (`env`), as an operator runs it on
    one machine of the deployment (its instance folder in `workdir`)."""
    return flask_cli(_environment(workdir / "cli-instance", env), *args)


def migrate(workdir: Path, database_url: str) -> None:
    """`flask --app wsgi db upgrade` on the database, once for the whole deployment."""
    result = cli(workdir, {"SVC_DATABASE_URL": database_url}, "db", "upgrade")
    if result.returncode != 0:
        raise AssertionError(f"flask db upgrade failed ({result.returncode}):\n{result.stderr}")


@dataclass
class Instance(Gunicorn):
    """One gunicorn instance of the deployment."""

    def wait_for_workers(self, count: int, timeout: float = STARTUP_TIMEOUT) -> None:
        """Until `count` live workers have loaded the app."""
        deadline = time.monotonic() + timeout
        while True:
            live = set(self.worker_pids())
            if len(live & self.ready_pids()) >= count:
                return
            if self.process.poll() is not None:
                raise AssertionError(f"{self.name}: gunicorn exited:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: {len(live & self.ready_pids())} of {count}"
                                     f" workers ready after {timeout:.0f} s:\n{self.log()}")
            time.sleep(0.05)

    def stop(self, timeout: float = 10.0) -> None:
        super().stop(timeout)


InstanceFactory = Callable[..., Instance]


def start_instance(workdir: Path, env: dict[str, str], *, workers: int = 2,
                   name: str = "instance") -> Instance:
    """Serve an already migrated database with `gunicorn wsgi:app` on a free port; wait until
    every worker has loaded the app and /health answers (any status will do: a test may start
    an instance whose database is down). Raises tests.support.server.GunicornError."""
    folder = workdir / f"{name}-{uuid.uuid4().hex[:6]}"
    (folder / "instance").mkdir(parents=True)
    return start_gunicorn(
        folder, _environment(folder / "instance", env), name=name, workers=workers,
        options=["--worker-class", "sync", "--timeout", "30", "--graceful-timeout", "3",
                 "--no-control-socket"],
        traced=True, expect=None, timeout=STARTUP_TIMEOUT, kind=Instance)


def start_instances(workdir: Path, specs: list[tuple[str, dict[str, str]]],
                    workers: int = 2) -> list[Instance]:
    """Several instances started at the same time; all or none (the started ones are stopped
    if one fails)."""
    with ThreadPoolExecutor(max_workers=len(specs)) as pool:
        futures = [pool.submit(start_instance, workdir, env, workers=workers, name=name)
                   for name, env in specs]
        started, failure = [], None
        for future in futures:
            try:
                started.append(future.result())
            except BaseException as exc:  # noqa: BLE001 (re-raised once the others are stopped)
                failure = failure or exc
    if failure is not None:
        for instance in started:
            instance.stop()
        raise failure
    return started


def new_workdir(prefix: str) -> Path:
    # Not pytest's tmp_path: other pytest sessions prune old pytest-N folders.
    return Path(tempfile.mkdtemp(prefix=f"svc-prod-{prefix}-"))


def restart_postgres(server: PostgresServer) -> None:
    """Start a stopped server again, on its data folder and port (as start_postgres does, with
    no initdb); wait until it accepts connections."""
    from tests.support.postgres import TEST_SETTINGS

    assert server.process is None, "the server is still running"
    settings = [arg for k, v in TEST_SETTINGS.items() for arg in ("-c", f"{k}={v}")]
    run_as: dict[str, Any] = {}
    if server.run_as is not None:
        run_as = {"user": server.run_as.uid, "group": server.run_as.gid, "extra_groups": []}
    with server.log_path.open("ab") as log:
        server.process = subprocess.Popen(
            [*pdeathsig_prefix(signal.SIGINT), str(server.bindir / "postgres"),
             "-D", str(server.data_dir), "-k", str(server.socket_dir), "-h", LOOPBACK,
             "-p", str(server.port), "-F", *settings],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            cwd=server.data_dir.parent, env=clean_env(), start_new_session=True, **run_as,
        )

    def accepts() -> bool:
        assert server.process is not None and server.process.poll() is None, "postgres exited"
        try:
            with psycopg.connect(server.conninfo(), connect_timeout=2):
                return True
        except psycopg.Error:
            return False

    wait_until(accepts, 30, "PostgreSQL accepts connections again")
