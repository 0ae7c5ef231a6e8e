"""gunicorn settings for every server bench/run.py starts: the project's own gunicorn.conf.py
(timeouts, keep-alive, access log, metrics hooks), with what a benchmark has to change.

bench/run.py also passes --bind, --workers (2) and --worker-class (sync; uvicorn's worker for
fastapi-users) on the command line, which win over any file.
"""

import os
import runpy

_production = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "gunicorn.conf.py"))
globals().update({name: value for name, value in _production.items()
                  if not name.startswith("_") and not callable(value)
                  and not isinstance(value, type(os))})
on_starting = _production["on_starting"]
post_worker_init = _production["post_worker_init"]

# Production recycles each worker after 10,000-11,000 requests. A benchmark at saturation
# (the floor answers ~3,000 a second) would restart every worker several times a run: it would
# measure start-up, drop the service's caches and lose the workers' peak RSS. Off, for every
# server alike.
max_requests = 0
max_requests_jitter = 0


def child_exit(server, worker):
    # The production hook tidies the service's Prometheus files; fastapi-users' virtual
    # environment has no prometheus_client, and the other apps write no metrics.
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        return
    _production["child_exit"](server, worker)
