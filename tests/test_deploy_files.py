"""The alert rules and the dashboard (deploy/prometheus, deploy/grafana) name only metrics the
service exposes, under the names Prometheus gives their samples; and every metric the service
exposes is on the dashboard. (scripts/check-deploy runs promtool, nginx -t and systemd-analyze
on the same files.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

from prometheus_client import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}


def _exposed() -> dict[str, set[str]]:
    """Each family of ours: the names its samples take."""
    import app.domain.mail.outbox_ops  # noqa: F401  (the outbox's gauges, made at each scrape)
    import app.observability  # noqa: F401

    families = {metric.name: metric.type for metric in REGISTRY.collect()
                if metric.name.startswith("svc_auth_")}
    # Collected from the database at scrape time (app/domain/mail/outbox_ops.py), not registered
    # globally: named by hand, and checked against that module's text.
    outbox = (ROOT / "app" / "domain" / "mail" / "outbox_ops.py").read_text()
    for name in ("svc_auth_mail_jobs", "svc_auth_mail_oldest_pending_seconds"):
        assert f'"{name}"' in outbox
        families[name] = "gauge"
    return {name: {name + suffix for suffix in SUFFIXES[kind]} for name, kind in families.items()}


def _named_in(text: str) -> set[str]:
    return set(re.findall(r"\bsvc_auth_[a-z_]+", text))


def test_the_rules_and_the_dashboard_name_only_exposed_metrics():
    exposed = set().union(*_exposed().values())
    rules = (ROOT / "deploy" / "prometheus" / "svc-auth.rules.yml").read_text()
    dashboard = json.loads((ROOT / "deploy" / "grafana" / "svc-auth.json").read_text())
    expressions = " ".join(target["expr"] for panel in dashboard["panels"]
                           for target in panel["targets"])
    assert _named_in(rules) and _named_in(rules) <= exposed, _named_in(rules) - exposed
    assert _named_in(expressions) <= exposed, _named_in(expressions) - exposed


def test_every_exposed_metric_is_on_the_dashboard():
    dashboard = (ROOT / "deploy" / "grafana" / "svc-auth.json").read_text()
    missing = [name for name, samples in _exposed().items()
               if not samples & _named_in(dashboard)]
    assert missing == []
