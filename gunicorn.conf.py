"""gunicorn settings for svc-auth: `gunicorn -c gunicorn.conf.py wsgi:app`.

Every value can be overridden on the command line or through GUNICORN_CMD_ARGS.
"""

import gc
import json
import multiprocessing
import os
import shutil
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
# Sync workers (PERFORMANCE.md: steadier than gthread here). Password hashing is CPU-bound,
# database calls are short: a little more than one worker per core. Without Redis the rate
# limits live in one process's memory, so one worker, and on_starting refuses more.
workers = int(os.environ.get("WEB_CONCURRENCY",
                             1 if _limits_in_memory() else multiprocessing.cpu_count() + 1))
worker_class = "sync"
timeout = 30            # a request that takes longer is a stuck worker: restart it
graceful_timeout = 30
keepalive = 5
max_requests = 10_000   # recycle workers now and then, staggered, to bound memory
max_requests_jitter = 1_000
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


def post_worker_init(worker):  # noqa: ARG001
    # The modules and the app, loaded by now, live as long as the worker. Frozen, the garbage
    # collector stops walking them again: a full collection over them took 70-100 ms, a pause
    # that whichever request triggered it would pay. (The Python docs' advice for forking
    # servers.)
    gc.freeze()


def child_exit(server, worker):  # noqa: ARG001
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
