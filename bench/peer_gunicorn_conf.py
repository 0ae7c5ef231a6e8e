"""gunicorn settings for fastapi-users, the peer bench/run.py compares svc-auth with: the
project's gunicorn.conf.py values (timeouts, keep-alive, workers, recycling), without its hooks,
which belong to svc-auth (its metrics, its app). Every server of ours runs gunicorn.conf.py itself.

bench/run.py also passes --bind and --worker-class (uvicorn's worker) on the command line.
"""

import os
import runpy

_production = runpy.run_path(os.path.join(os.path.dirname(__file__), "..", "gunicorn.conf.py"))
globals().update({name: value for name, value in _production.items()
                  if not name.startswith("_") and not callable(value)
                  and not isinstance(value, type(os))})
preload_app = False  # the peer's own start-up, as its documentation runs it
