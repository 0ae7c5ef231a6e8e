"""gunicorn settings for svc-auth: `gunicorn -c gunicorn.conf.py wsgi:app`.

Every value can be overridden on the command line or through GUNICORN_CMD_ARGS.
"""

import gc
import json
import multiprocessing
import os
import shutil
import sys
import tempfile


def _setting(name, default):
    """An SVC_ setting read as the app reads it (Flask's from_prefixed_env: JSON, else text),
    without loading the app into the master."""
    raw = os.environ.get(f"SVC_{name}")
    if raw is None:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _limits_in_memory():
    """Rate limits on, without Redis: flask-limiter counts in each process's memory."""
    return bool(_setting("RATELIMIT_ENABLED", True)) and not _setting("REDIS_URL", None)


bind = os.environ.get("SVC_BIND", "127.0.0.1:5000")
# Sync workers (PERFORMANCE.md: steadier than gthread here), one per core: password hashing is
# CPU-bound and database calls are short, so a worker more than the cores only adds switching
# (measured: cores + 1 put the p99 of a bare Flask answer at 24 ms against 10 ms). Without Redis
# the rate limits live in one process's memory, so one worker, and on_starting refuses more.
workers = int(os.environ.get("WEB_CONCURRENCY",
                             1 if _limits_in_memory() else multiprocessing.cpu_count()))
worker_class = "sync"
timeout = 30            # a request that takes longer is a stuck worker: restart it
graceful_timeout = 30
keepalive = 5
# The master loads the app once and every worker is a fork of it: starting or recycling a worker
# costs a fork (milliseconds), not an import and an app build (about 0.8 s, during which that
# worker's share of the connections waited). Loading the app opens no connection and starts no
# thread (tests/e2e/test_gunicorn_config.py holds it): those are made in each worker, on first
# use. One consequence: `kill -HUP` reloads the configuration, not the code; deploy new code with
# a restart.
preload_app = True
# Recycle workers now and then, to bound memory, at points spread over half the range, so that
# they never all restart together.
max_requests = 20_000
max_requests_jitter = 10_000
# gunicorn's control socket lives at one path per user: two instances on one machine would
# fight over it, and nothing here uses it.
control_socket_disable = True

# The access log names the path without its query string (where codes, states and reset
# tokens travel) and the request id that the app's own log lines carry.
accesslog = "-"
access_log_format = (
    '%(h)s "%(m)s %(U)s" %(s)s %(B)s %(M)sms req=%({x-request-id}o)s ua="%(a)s"'
)
errorlog = "-"

# Prometheus: each worker writes its metrics to files here; /metrics merges them.
if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="svc-auth-metrics-")
_metrics_dir = os.environ["PROMETHEUS_MULTIPROC_DIR"]


def on_starting(server):
    if server.cfg.workers > 1 and _limits_in_memory():
        # gunicorn prints a RuntimeError raised here as "Error: ..." and exits with status 1.
        raise RuntimeError(
            f"refusing to start {server.cfg.workers} workers with rate limits in memory: each"
            " worker would count alone, and a recycled one would start again from zero. Set"
            " SVC_REDIS_URL=redis://... so that every worker (and instance) shares the counters,"
            " or run one worker (WEB_CONCURRENCY=1, or --workers 1).")
    # Metrics of a previous run must not be added to this one's.
    shutil.rmtree(_metrics_dir, ignore_errors=True)
    os.makedirs(_metrics_dir, exist_ok=True)


def when_ready(server):  # noqa: ARG001
    # In the master, after the app was loaded and before the first fork: what it loaded is
    # frozen once, and every worker starts with it out of the collector's way (and shared with
    # the master, page for page, until written).
    gc.collect()
    gc.freeze()


def post_fork(server, worker):  # noqa: ARG001
    # A worker must not share a database connection with the master or a sibling. The master
    # opens none while loading the app; should one ever be pooled there, this worker forgets it
    # without closing it under the master (SQLAlchemy's advice for forking servers).
    wsgi = sys.modules.get("wsgi")
    loaded = getattr(wsgi, "app", None)
    if loaded is not None and "sqlalchemy" in loaded.extensions:
        with loaded.app_context():
            from app.extensions import db

            for engine in db.engines.values():
                engine.dispose(close=False)


def post_worker_init(worker):  # noqa: ARG001
    # The modules and the app, loaded by now, live as long as the worker. Frozen, the garbage
    # collector stops walking them again: a full collection over them took 70-100 ms, a pause
    # that whichever request triggered it would pay. (The Python docs' advice for forking
    # servers.)
    gc.freeze()


def child_exit(server, worker):  # noqa: ARG001
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
