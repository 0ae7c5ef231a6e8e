"""Request ids, structured logs and Prometheus metrics. An incoming X-Request-Id is kept only
behind a trusted proxy: otherwise a client could make its log lines look like someone else's.
Why: docs/architecture/design-notes.md, "Observability"."""

from __future__ import annotations

import functools
import hmac
import json
import logging
import os
import re
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, has_request_context, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from werkzeug.exceptions import NotFound

_INCOMING_ID = re.compile(r"^[A-Za-z0-9._-]{8,64}$")

REQUESTS = Histogram(
    "svc_auth_request_seconds", "Time to answer a request, by endpoint and status.",
    ["endpoint", "method", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
EVENTS = Counter("svc_auth_events", "Security events (logins, failures, refreshes, reuse...).",
                 ["event"])
RATE_LIMITED = Counter("svc_auth_rate_limited", "Requests refused with 429, by endpoint.",
                       ["endpoint"])
CAPTCHA_CHECKS = Counter("svc_auth_captcha_checks",
                         "Captcha tokens checked, by purpose and result (passed, missing, failed, "
                         "replayed, wrong_hostname, wrong_action, low_score, unavailable).",
                         ["purpose", "result"])

bp = Blueprint("observability", __name__)
SCRAPED = "svc-auth-scraped"  # app.extensions: a registry whose collectors run at each scrape


def count_event(event: str) -> None:
    EVENTS.labels(event=event).inc()


def count_captcha(purpose: str, result: str) -> None:
    CAPTCHA_CHECKS.labels(purpose=purpose, result=result).inc()


# Request ids and timing ------------------------------------------------------------------------

def _start_request() -> None:
    g.request_id = uuid.uuid4().hex
    g.request_started = time.perf_counter()


def _start_request_behind_proxy() -> None:
    incoming = request.environ.get("HTTP_X_REQUEST_ID", "")
    g.request_id = incoming if _INCOMING_ID.match(incoming) else uuid.uuid4().hex
    g.request_started = time.perf_counter()


def _finish_request(response: Response) -> Response:
    response.headers["X-Request-Id"] = g.get("request_id", "")
    endpoint = request.endpoint or "unrouted"
    started = g.get("request_started")
    if started is not None:
        _timer(endpoint, request.method, response.status_code).observe(
            time.perf_counter() - started)
    if response.status_code == 429:
        RATE_LIMITED.labels(endpoint).inc()
    return response


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


@functools.lru_cache(maxsize=1024)
def _timer(endpoint: str, method: str, status: int) -> Histogram:
    # Looked up once per endpoint, method and status: labels() takes a lock and checks its
    # arguments on every call. Any other method a client makes up counts as one, "other":
    # each label value is a series kept forever.
    return REQUESTS.labels(endpoint, method if method in _METHODS else "other", str(status))


# Logs ------------------------------------------------------------------------------------------

class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = g.get("request_id", "-") if has_request_context() else "-"
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=True)


def configure_logging(app: Flask) -> None:
    """One handler on the service's loggers, whatever how many apps a process creates."""
    logger = logging.getLogger("svc_auth")
    logger.setLevel(logging.INFO)
    fmt = app.config["LOG_FORMAT"] or ("json" if app.config["ENV"] == "production" else "text")
    formatter: logging.Formatter = JsonFormatter() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")
    handler = next((h for h in logger.handlers if getattr(h, "svc_auth", False)), None)
    if handler is None:
        handler = logging.StreamHandler()
        handler.svc_auth = True  # type: ignore[attr-defined]  # our mark, looked for above
        handler.addFilter(RequestIdFilter())
        logger.addHandler(handler)
    handler.setFormatter(formatter)
    for name in ("flask-limiter",):  # libraries whose warnings belong in the same stream
        logging.getLogger(name).addHandler(handler)


# /metrics --------------------------------------------------------------------------------------

@bp.get("/metrics")
def metrics() -> Response:
    token = current_app.config["METRICS_TOKEN"]
    supplied = request.headers.get("Authorization", "").removeprefix("Bearer ").encode()
    if not token or not hmac.compare_digest(supplied, str(token).encode()):
        raise NotFound()  # the endpoint does not exist for anyone without the token
    registry: CollectorRegistry | None = None
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    payload = generate_latest(registry) if registry else generate_latest()
    # Figures read from the database at scrape time (the outbox's), the same for every worker.
    payload += generate_latest(current_app.extensions[SCRAPED])
    return Response(payload, mimetype=CONTENT_TYPE_LATEST, headers={"Cache-Control": "no-store"})


def init_app(app: Flask) -> None:
    configure_logging(app)
    app.extensions[SCRAPED] = CollectorRegistry()
    behind_proxy = int(app.config["TRUSTED_PROXIES"]) > 0
    app.before_request(_start_request_behind_proxy if behind_proxy else _start_request)
    app.after_request(_finish_request)
    app.register_blueprint(bp)
