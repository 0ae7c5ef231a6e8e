"""The project's own gunicorn.conf.py, as production runs it (every e2e server loads it too):
an access log with no token or query secret in it, metrics merged over the workers, the
workers' start-up objects kept away from the garbage collector, and the limits kept by workers
that come and go."""

from __future__ import annotations

import gc
import os
import re
import runpy
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.support.server import ROOT
from tests.support.sqlite_server import ServerFactory

pytestmark = pytest.mark.e2e

SECRETS = ("query-secret-4f1c", "header-secret-9a2b", "reset-secret-77de", "body-secret-31ce")


def test_the_access_log_records_requests_without_their_secrets(
        server_factory: ServerFactory) -> None:
    server = server_factory(workers=1, access_log_format=None)  # the project's own format
    query, header, reset, body = SECRETS
    verify = requests.get(server.url(f"/api/v2/auth/verify?access_token={query}"),
                          headers={"Authorization": f"Bearer {header}"}, timeout=10)
    requests.get(server.url(f"/reset-password?token={reset}"), timeout=10)
    requests.post(server.url("/api/v2/auth/refresh"), json={"refresh_token": body}, timeout=10)
    assert verify.status_code == 401

    deadline = time.monotonic() + 5  # a worker logs just after it answers
    while "/api/v2/auth/refresh" not in server.access_log.read_text() \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    log = server.access_log.read_text()
    assert re.search(rf'"GET /api/v2/auth/verify" 401 .* req={verify.headers["X-Request-Id"]}',
                     log), log
    assert '"GET /reset-password"' in log and '"POST /api/v2/auth/refresh" 401' in log, log
    for secret in SECRETS:
        assert secret not in log


def test_metrics_add_up_over_every_worker(server_factory: ServerFactory) -> None:
    server = server_factory(workers=2, env={"SVC_METRICS_TOKEN": "scrape-token-for-tests"})
    for _ in range(40):  # spread over both workers by the kernel
        assert requests.get(server.url("/health"), timeout=10).status_code == 200
    metrics = requests.get(server.url("/metrics"), timeout=10,
                           headers={"Authorization": "Bearer scrape-token-for-tests"}).text
    counted = sum(float(value) for value in re.findall(
        r'^svc_auth_request_seconds_count\{endpoint="wellknown\.health",[^}]*\} (\S+)$',
        metrics, flags=re.MULTILINE))
    assert counted >= 40, metrics[:2000]


def test_workers_freeze_what_they_loaded_before_serving(monkeypatch: pytest.MonkeyPatch,
                                                        tmp_path: Path) -> None:
    # (The file would otherwise set this process's metrics folder: other tests read it.)
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    try:
        config["post_worker_init"](None)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def _load_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> dict:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    for name in ("SVC_REDIS_URL", "SVC_RATELIMIT_ENABLED", "WEB_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "gunicorn.conf.py"))


def test_workers_default_to_one_per_core_with_or_without_redis(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No limit lives in a worker's memory (the database or Redis counts them): nothing holds
    the workers to one."""
    for env in ({}, {"SVC_REDIS_URL": "redis://127.0.0.1:6379/0"},
                {"SVC_RATELIMIT_ENABLED": "false"}):
        assert _load_config(monkeypatch, tmp_path, **env)["workers"] == os.cpu_count()
    assert _load_config(monkeypatch, tmp_path, WEB_CONCURRENCY="3")["workers"] == 3


def test_loading_the_app_opens_no_connection_and_starts_no_thread(tmp_path: Path) -> None:
    """gunicorn.conf.py preloads the app in the master and forks every worker from it: nothing
    that must not cross a fork (a connection, a thread) may exist after loading it."""
    probe = (
        "import threading\n"
        "import wsgi\n"
        "from app.extensions import db\n"
        "with wsgi.app.app_context():\n"
        "    pools = [engine.pool for engine in db.engines.values()]\n"
        "    opened = sum(pool.checkedin() + pool.checkedout() for pool in pools)\n"
        "print(threading.active_count(), opened)\n"
    )
    env = {**os.environ, "SVC_INSTANCE_PATH": str(tmp_path / "instance"),
           "SVC_REDIS_URL": "redis://127.0.0.1:9/0",  # its clients exist; none may connect
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, text=True,
                            capture_output=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "0"]


def test_the_shipped_configuration_preloads_and_recycles_workers_apart(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    config = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert config["preload_app"] is True
    # Recycling points spread over half the range: two workers never restart together.
    assert config["max_requests_jitter"] >= config["max_requests"] // 2


@pytest.mark.parametrize("workers", [1, 2])
def test_the_limits_without_redis_survive_recycled_workers(server_factory: ServerFactory,
                                                           workers: int) -> None:
    """Workers without Redis (one is the embedded default), each recycled every 2 requests: the
    limit of 3 forgot-password mails an hour per email holds across them and their successors
    (in memory, each worker allowed 3 more)."""
    server = server_factory(workers=workers, env={
        "SVC_RATELIMIT_ENABLED": "true", "SVC_LIMIT_FORGOT": "3 per hour",
        "GUNICORN_CMD_ARGS": "--max-requests 2 --max-requests-jitter 0"})
    answers = [requests.post(server.url("/api/v2/auth/forgot-password"),
                             json={"email": "ada@example.com"}, timeout=10).status_code
               for _ in range(8)]
    assert answers == [202] * 3 + [429] * 5
    assert server.log().count("Booting worker") >= 4, server.log()[-2000:]


def test_recycled_workers_keep_serving(server_factory: ServerFactory) -> None:
    """Every worker recycled every few requests (a fork of the loaded master each time): no
    request is lost or fails."""
    server = server_factory(workers=2, env={
        "GUNICORN_CMD_ARGS": "--max-requests 5 --max-requests-jitter 0"})
    answers = [requests.get(server.url("/health"), timeout=10).status_code for _ in range(60)]
    assert answers == [200] * 60
    assert server.log().count("Booting worker") >= 6, server.log()[-2000:]
