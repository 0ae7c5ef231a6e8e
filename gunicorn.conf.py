"""gunicorn settings for svc-auth: `gunicorn -c gunicorn.conf.py wsgi:app`.

Every value can be overridden on the command line or through GUNICORN_CMD_ARGS.
"""

import gc
import multiprocessing
import os
import shutil
import sys
import tempfile

bind = os.environ.get("SVC_BIND", "127.0.0.1:5000")
# Sync workers (PERFORMANCE.md: steadier than gthread here), one per core: password hashing is
# CPU-bound and database calls are short, so a worker more than the cores only adds switching
# (measured: cores + 1 put the p99 of a bare Flask answer at 24 ms against 10 ms). The rate
# limits live in Redis or in the database (app/web/limit_storage.py), never in a worker: any
# number of workers count together, and a recycled one forgets nothing.
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count()))
worker_class = "sync"
timeout = 30            # a request that takes longer is a stuck worker: restart it
graceful_timeout = 30
keepalive = 5
# The master loads the app once and every worker is a fork of it: starting or recycling a worker
# costs a fork (milliseconds), not an import and an app build (about 0.8 s, during which that
# worker's share of the connections waited). Loading the app opens no connection and starts no
# thread (tests/system/e2e/test_gunicorn_config.py holds it): those are made in each worker, on first
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


def on_starting(server):  # noqa: ARG001
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
