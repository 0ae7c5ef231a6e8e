"""Request ids, structured logs, metrics, and the health endpoints."""

import json
import logging

import pytest


def test_every_response_has_a_request_id_and_a_good_incoming_one_is_kept(client):
    generated = client.get("/health").headers["X-Request-Id"]
    assert len(generated) == 32
    kept = client.get("/health", headers={"X-Request-Id": "proxy-id-12345"})
    assert kept.headers["X-Request-Id"] == "proxy-id-12345"
    hostile = client.get("/health", headers={"X-Request-Id": "bad id\\nX-Evil: 1"})
    assert hostile.headers["X-Request-Id"] != "bad id\\nX-Evil: 1"


def test_log_lines_carry_the_request_id(client, user, caplog):
    caplog.set_level("INFO")
    response = client.post("/api/v2/auth/login", json={"email": user.email, "password": "nope!"},
                           headers={"X-Request-Id": "trace-abc-123"})
    records = [r for r in caplog.records if r.name == "svc_auth.audit"]
    assert records and all(r.request_id == "trace-abc-123" for r in records)
    assert response.headers["X-Request-Id"] == "trace-abc-123"


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
