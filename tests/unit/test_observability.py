"""Request ids, structured logs, metrics, and the health endpoints."""

import json
import logging
import re
from pathlib import Path

import pytest


def test_without_a_trusted_proxy_every_request_id_is_our_own(client, user, caplog):
    """No proxy sets X-Request-Id: a client's would let it pass its requests' log lines off as
    someone else's (issue 12, item 11)."""
    generated = client.get("/health").headers["X-Request-Id"]
    assert len(generated) == 32
    caplog.set_level("INFO")
    response = client.post("/api/v2/auth/login", json={"email": user.email, "password": "nope!"},
                           headers={"X-Request-Id": "someone-elses-id-42"})
    ours = response.headers["X-Request-Id"]
    assert ours != "someone-elses-id-42" and len(ours) == 32
    records = [r for r in caplog.records if r.name == "svc_auth.audit"]
    assert records and all(r.request_id == ours for r in records)


class TestBehindAProxy:
    @pytest.fixture
    def settings(self):
        return {"TRUSTED_PROXIES": 1}

    def test_a_good_incoming_id_is_kept(self, client):
        kept = client.get("/health", headers={"X-Request-Id": "proxy-id-12345"})
        assert kept.headers["X-Request-Id"] == "proxy-id-12345"
        hostile = client.get("/health", headers={"X-Request-Id": "bad id\\nX-Evil: 1"})
        assert hostile.headers["X-Request-Id"] != "bad id\\nX-Evil: 1"
        assert len(client.get("/health").headers["X-Request-Id"]) == 32

    def test_log_lines_carry_the_request_id(self, client, user, caplog):
        caplog.set_level("INFO")
        response = client.post("/api/v2/auth/login",
                               json={"email": user.email, "password": "nope!"},
                               headers={"X-Request-Id": "trace-abc-123"})
        records = [r for r in caplog.records if r.name == "svc_auth.audit"]
        assert records and all(r.request_id == "trace-abc-123" for r in records)
        assert response.headers["X-Request-Id"] == "trace-abc-123"


def test_the_documented_nginx_example_logs_paths_without_their_query_strings():
    """Reset tokens, handoff codes and states travel in query strings (issue 12, item 11)."""
    example = (Path(__file__).resolve().parents[2] / "deploy" / "nginx" / "svc-auth.conf"
               ).read_text()
    name, log_format = re.search(r"log_format (\w+) (.*?);", example, re.DOTALL).groups()
    assert re.search(rf"access_log \S+ {name};", example)
    logged = set(re.findall(r"\$(\w+)", log_format))
    assert "uri" in logged
    leaky = {"request", "request_uri", "args", "query_string", "is_args", "http_referer"}
    assert logged & leaky == set() and not any(v.startswith("arg_") for v in logged)


def test_the_json_format_is_one_object_per_line():
    from app.observability import JsonFormatter

    record = logging.LogRecord("svc_auth.audit", logging.INFO, __file__, 1,
                               "event=%s", ("login_failed\r\nforged",), None)
    record.request_id = "r1"
    line = JsonFormatter().format(record)
    assert "\n" not in line and "\r" not in line
    assert json.loads(line)["message"] == "event=login_failed\r\nforged"
    assert json.loads(line)["request_id"] == "r1"


def test_metrics_do_not_exist_without_the_setting(client):
    assert client.get("/metrics").status_code == 404


class TestMetrics:
    @pytest.fixture
    def settings(self):
        return {"METRICS_TOKEN": "metrics-secret-123"}

    def test_metrics_need_the_token(self, client):
        assert client.get("/metrics").status_code == 404
        assert client.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 404

    def test_metrics_count_requests_events_and_refusals(self, client, user):
        client.post("/api/v2/auth/login", json={"email": user.email, "password": "wrong!!"})
        client.post("/api/v2/auth/login", json={"email": user.email, "password": user.password})
        body = client.get("/metrics", headers={"Authorization": "Bearer metrics-secret-123"}).text
        assert 'svc_auth_events_total{event="login_failed"}' in body
        assert 'svc_auth_events_total{event="login_succeeded"}' in body
        assert ('svc_auth_request_seconds_count{endpoint="api_v2.login",method="POST",'
                'status="401"}') in body

    def test_made_up_methods_are_one_series(self, client):
        for method in ("BREW", "WHEN", "X-ANYTHING-1"):
            assert client.open("/health", method=method).status_code == 405
        body = client.get("/metrics", headers={"Authorization": "Bearer metrics-secret-123"}).text
        assert 'method="other",status="405"' in body
        assert "BREW" not in body and "X-ANYTHING-1" not in body


def test_health_ready_checks_the_database(client):
    response = client.get("/health/ready")
    assert response.status_code == 200
    assert response.get_json() == {"status": "ok", "database": "ok", "redis": "not configured"}
