"""Production-shape servers: gunicorn instances on PostgreSQL and Redis, over HTTP on 127.0.0.1.

`tests/e2e/conftest.py` serves a SQLite file that it migrates itself; here the database is a
PostgreSQL one, migrated once (`migrate`) however many instances then serve it
(`start_instance`, or `start_instances` to start several at once). Each instance is a real
`gunicorn wsgi:app` with its own work folder, error log (the app's log goes there too) and
access log, which records the worker that answered each request carrying an `X-E2E-Id` header.
"""

from __future__ import annotations

import email
import email.policy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.e2e.conftest import (  # the real-server conventions the e2e tests set
    ACCESS_LOG_FORMAT,
    BASE_ENV,
    GUNICORN_CONFIG,
    PASSWORD,
    READY_MARK,
    ROOT,
    TRACE_HEADER,
)
from tests.infra import free_port

NEW_PASSWORD = "a quite different passphrase"
TIMEOUT = 15.0  # seconds, for any one HTTP request
STARTUP_TIMEOUT = 30.0
PROBLEM_JSON = "application/problem+json"


# Keys and environments -----------------------------------------------------------------------

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
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SVC_", "PG"))}
    env.update(BASE_ENV)
    env.update({"SVC_INSTANCE_PATH": str(instance_path), "PYTHONUNBUFFERED": "1"})
    env.update(overrides)
    return env


def flask_cli(workdir: Path, env: dict[str, str], *args: str,
              timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`flask --app wsgi ARGS` with the deployment's settings, in an instance folder of its own."""
    full_env = _environment(workdir / "cli-instance", env)
    return subprocess.run(
        [sys.executable, "-m", "flask", "--app", "wsgi", *args], cwd=ROOT, env=full_env,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False,
    )


def migrate(workdir: Path, database_url: str) -> None:
    """`flask --app wsgi db upgrade` on the database, once for the whole deployment."""
    result = flask_cli(workdir, {"SVC_DATABASE_URL": database_url}, "db", "upgrade")
    if result.returncode != 0:
        pytest.fail(f"flask db upgrade failed ({result.returncode}):\n{result.stderr}")


# Instances -----------------------------------------------------------------------------------

@dataclass
class Instance:
    name: str
    base_url: str
    workdir: Path
    error_log: Path
    access_log: Path
    workers: int
    process: subprocess.Popen[bytes] = field(repr=False)

    def url(self, path: str) -> str:
        return self.base_url + path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        """gunicorn's error log, where the app's own log lines go too."""
        return self.error_log.read_text(errors="replace") if self.error_log.exists() else ""

    def access(self) -> str:
        return self.access_log.read_text(errors="replace") if self.access_log.exists() else ""

    def ready_pids(self) -> set[int]:
        """Every worker that has loaded the app so far (including ones that died since)."""
        found = re.findall(rf"{READY_MARK} (\d+)", self.log())
        return {int(pid) for pid in found}

    def worker_pids(self) -> list[int]:
        """The master's live child processes (the workers), from /proc."""
        children: list[int] = []
        for task in Path(f"/proc/{self.pid}/task").glob("*/children"):
            try:
                children.extend(int(pid) for pid in task.read_text().split())
            except OSError:
                continue
        return sorted(set(children))

    def traced_pids(self, traces: list[str], timeout: float = 5.0) -> dict[str, int]:
        """The worker that answered each traced request (the access-log line follows the
        response by a moment, so wait for lines not written yet)."""
        deadline = time.monotonic() + timeout
        while True:
            known: dict[str, int] = {}
            for line in self.access().splitlines():
                parts = line.split(" ")
                if len(parts) == 5 and parts[1] != "-":
                    known[parts[1]] = int(parts[0].strip("<>"))
            if all(t in known for t in traces):
                return {t: known[t] for t in traces}
            if time.monotonic() > deadline:
                missing = [t for t in traces if t not in known]
                raise AssertionError(f"{self.name}: not in the access log: {missing}")
            time.sleep(0.05)

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

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # graceful shutdown
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def _wait_until_serving(instance: Instance) -> str | None:
    """None once every worker has loaded the app and GET /health answers; else why not.
    (Any status will do: a test may start an instance whose database is down.)"""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if instance.process.poll() is not None:
            return f"gunicorn exited with {instance.process.returncode}"
        if len(instance.ready_pids()) < instance.workers:
            time.sleep(0.05)
            continue
        try:
            requests.get(instance.url("/health"), timeout=2).close()
        except requests.RequestException:
            time.sleep(0.05)
            continue
        return None
    return f"{len(instance.ready_pids())} of {instance.workers} workers ready in time"


def start_instance(workdir: Path, env: dict[str, str], *, workers: int = 2,
                   name: str = "instance") -> Instance:
    """Serve an already migrated database with `gunicorn wsgi:app` on a free port; wait until
    every worker has loaded the app and /health answers."""
    folder = workdir / f"{name}-{uuid.uuid4().hex[:6]}"
    (folder / "instance").mkdir(parents=True)
    config = folder / "gunicorn_production.conf.py"
    config.write_text(GUNICORN_CONFIG)
    for attempt in range(3):  # the free port may be taken between finding and binding it
        port = free_port()
        access_log, error_log = folder / f"access-{attempt}.log", folder / f"error-{attempt}.log"
        access_log.touch()
        full_env = {**_environment(folder / "instance", env),
                    "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics")}  # gunicorn.conf.py's
        with open(error_log, "wb") as stderr:
            process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{port}",
                 "--workers", str(workers), "--worker-class", "sync", "--timeout", "30",
                 "--graceful-timeout", "3",
                 "--access-logfile", str(access_log), "--access-logformat", ACCESS_LOG_FORMAT,
                 "--no-control-socket", "--config", str(config), "wsgi:app"],
                cwd=ROOT, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        instance = Instance(name, f"http://127.0.0.1:{port}", folder, error_log, access_log,
                            workers, process)
        try:
            problem = _wait_until_serving(instance)
        except BaseException:
            instance.stop()
            raise
        if problem is None:
            return instance
        instance.stop()
        if "Address already in use" in instance.log() and attempt < 2:
            continue
        pytest.fail(f"{name}: {problem}\n--- gunicorn log ---\n{instance.log()}")
    raise AssertionError("unreachable")


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


InstanceFactory = Callable[..., Instance]


@pytest.fixture
def workdir() -> Iterator[Path]:
    folder = new_workdir("test")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def instance_factory(workdir: Path) -> Iterator[InstanceFactory]:
    """`instance_factory(env, workers=2, name=...)`: an instance stopped when the test ends."""
    started: list[Instance] = []

    def start(env: dict[str, str], workers: int = 2, name: str = "instance") -> Instance:
        started.append(start_instance(workdir, env, workers=workers, name=name))
        return started[-1]

    try:
        yield start
    finally:
        for instance in started:
            instance.stop()


# HTTP helpers --------------------------------------------------------------------------------

def new_email(tag: str) -> str:
    return f"{tag}-{uuid.uuid4().hex[:10]}@example.com"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def post(instance: Instance, path: str, body: Any = None, *, timeout: float = TIMEOUT,
         **kwargs: Any) -> requests.Response:
    return requests.post(instance.url(path), json=body, timeout=timeout, **kwargs)


def get(instance: Instance, path: str, *, timeout: float = TIMEOUT,
        **kwargs: Any) -> requests.Response:
    return requests.get(instance.url(path), timeout=timeout, **kwargs)


def signup(instance: Instance, email_address: str, password: str = PASSWORD) -> dict[str, Any]:
    response = post(instance, "/api/v2/auth/signup",
                    {"email": email_address, "password": password, "full_name": "Ada"})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def login(instance: Instance, email_address: str, password: str = PASSWORD) -> requests.Response:
    return post(instance, "/api/v2/auth/login", {"email": email_address, "password": password})


def verify(instance: Instance, access_token: str, trace: str | None = None) -> requests.Response:
    headers = bearer(access_token)
    if trace:
        headers[TRACE_HEADER] = trace
    return get(instance, "/api/v2/auth/verify", headers=headers)


def refresh(instance: Instance, refresh_token: str) -> requests.Response:
    return post(instance, "/api/v2/auth/refresh", {"refresh_token": refresh_token})


def assert_problem(response: requests.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["Content-Type"] == PROBLEM_JSON, response.headers
    body: dict[str, Any] = response.json()
    assert (body["status"], body["code"]) == (status, code), body
    assert body["title"] and body["detail"]
    assert "Traceback" not in response.text
    return body


def all_at_once(count: int, call: Callable[[int], Any]) -> list[Any]:
    """Run `call(i)` in `count` threads released together; results (or the exception each
    raised) in order of i."""
    barrier = threading.Barrier(count)

    def run(index: int) -> Any:
        barrier.wait(timeout=TIMEOUT)
        try:
            return call(index)
        except Exception as exc:  # noqa: BLE001 (the caller decides what a failure means)
            return exc

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def wait_until(condition: Callable[[], Any], timeout: float, what: str,
               interval: float = 0.05) -> Any:
    """Poll `condition` until it returns something truthy; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(interval)


# Mail in a file:// folder --------------------------------------------------------------------

def mailed_links(folder: Path, to: str, path: str) -> list[str]:
    """Every link to `path` (with a token) mailed to `to`, oldest first."""
    links: list[tuple[int, str, str]] = []
    for eml in folder.glob("*.eml") if folder.exists() else []:
        message = email.message_from_bytes(eml.read_bytes(), policy=email.policy.default)
        if message.defects or message["To"] != to:
            continue  # (a defect: a file still being written)
        body = message.get_body(("plain",))  # type: ignore[attr-defined]
        text = body.get_content() if body is not None else ""
        for link in re.findall(r"https?://\S+" + re.escape(path) + r"\?token=[\w-]+", text):
            links.append((eml.stat().st_mtime_ns, eml.name, link))
    return [link for _, _, link in sorted(links)]
