"""Rate limits on every credential endpoint, and the 429 contract."""

import time
import uuid

import pytest

from tests.support.settings import change_settings

LIMITS = {
    "RATELIMIT_ENABLED": True,
    "LIMIT_LOGIN": "3 per minute", "LIMIT_LOGIN_IP": "5 per minute",
    "LIMIT_LOGIN_FAILURES": "7 per day",
    "LIMIT_SIGNUP": "2 per hour", "LIMIT_REFRESH": "4 per minute",
}


@pytest.fixture
def settings():
    return dict(LIMITS)


def wrong_login(client, email="ada@example.com", ip="10.0.0.1", path="/api/v2/auth/login",
                headers=None):
    return client.post(path, json={"email": email, "password": "wrong password"},
                       environ_base={"REMOTE_ADDR": ip}, headers=headers or {})


def test_login_is_limited_per_address_and_email(client, user):
    statuses = [wrong_login(client).status_code for _ in range(4)]
    assert statuses == [401, 401, 401, 429]
    assert wrong_login(client, email="bob@example.com").status_code == 401  # other email: ok


def test_the_429_contract(client, user):
    for _ in range(3):
        wrong_login(client)
    response = wrong_login(client)
    assert response.status_code == 429
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert body["code"] == "rate_limited"
    assert 0 < int(response.headers["Retry-After"]) <= 60
    assert body["retry_after"] == int(response.headers["Retry-After"])
    assert response.headers["Cache-Control"] == "no-store"


def test_v1_and_v2_share_the_login_counters(client, user):
    wrong_login(client, path="/api/v1/auth/login")
    wrong_login(client, path="/api/v2/auth/login")
    wrong_login(client, path="/api/v1/auth/login")
    assert wrong_login(client, path="/api/v2/auth/login").status_code == 429


def test_login_is_limited_per_address_across_emails(client):
    statuses = [wrong_login(client, email=f"user{i}@example.com").status_code for i in range(6)]
    assert statuses[-1] == 429 and statuses[:5] == [401] * 5


def test_failures_on_one_account_are_limited_from_any_address(client, user):
    """NIST 63B: guessing one account's password from many addresses is throttled too."""
    statuses = [wrong_login(client, ip=f"10.0.1.{i}").status_code for i in range(8)]
    assert statuses[:7] == [401] * 7 and statuses[7] == 429


def test_successful_logins_do_not_count_as_failures(client, user):
    for i in range(10):
        response = client.post("/api/v2/auth/login",
                               json={"email": user.email, "password": user.password},
                               environ_base={"REMOTE_ADDR": f"10.0.2.{i}"})
        assert response.status_code == 200


def test_x_forwarded_for_is_ignored_without_trusted_proxies(client, user):
    statuses = [wrong_login(client, headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code
                for i in range(4)]
    assert statuses[-1] == 429


def test_signup_is_limited_per_address(client):
    def signup(i):
        return client.post("/api/v2/auth/signup", json={
            "email": f"new{i}@example.com", "password": "a long enough passphrase"}).status_code

    assert [signup(i) for i in range(3)] == [201, 201, 429]


def test_refresh_is_limited_per_address(client):
    statuses = [client.post("/api/v2/auth/refresh", json={"refresh_token": "x" * 43}).status_code
                for _ in range(5)]
    assert statuses == [401, 401, 401, 401, 429]


class TestBehindATrustedProxy:
    @pytest.fixture
    def settings(self):
        return {**LIMITS, "TRUSTED_PROXIES": 1}

    def test_the_forwarded_address_is_the_client(self, client, user):
        """Each forwarded client has its own counter; the proxy's own address does not count."""
        statuses = [wrong_login(client, email=f"u{i}@example.com",
                                headers={"X-Forwarded-For": f"203.0.113.{i}"}).status_code
                    for i in range(8)]
        assert 429 not in statuses

    def test_only_the_last_hop_is_trusted(self, client, user):
        """A client cannot pick its address by sending its own X-Forwarded-For to the proxy."""
        statuses = [wrong_login(client, email=f"u{i}@example.com",
                                headers={"X-Forwarded-For": f"198.51.100.{i}, 203.0.113.9"})
                    .status_code for i in range(6)]
        assert statuses[-1] == 429


def test_cors_preflights_do_not_count(client, user):
    """Every JSON POST from a browser is preceded by an OPTIONS preflight: it must not cost
    the person an attempt."""
    for _ in range(5):
        preflight = client.options("/api/v2/auth/login", headers={
            "Origin": "https://symbols.example", "Access-Control-Request-Method": "POST"},
            environ_base={"REMOTE_ADDR": "10.0.0.1"})
        assert preflight.status_code == 200
    assert wrong_login(client).status_code == 401


def test_a_body_without_an_email_is_still_counted_and_logs_no_error(client, caplog):
    statuses = [client.post("/api/v2/auth/forgot-password", json={}).status_code
                for _ in range(3)]
    assert statuses == [422, 422, 422]
    assert "Empty value found" not in caplog.text


def test_an_app_with_limits_off_is_not_limited_by_another_apps_setting(tmp_path, clock,
                                                                       database_url):
    """The process's one Limiter takes `enabled` from the last app started: an app with limits
    off must still never answer 429 (the contract fuzzer's app lives beside limited ones)."""
    from app.extensions import db
    from tests.support.apps import build_app, dispose_app

    off = build_app(tmp_path / "off", clock, {"LIMIT_LOGIN": "1 per minute"}, database_url)
    on = build_app(tmp_path / "on", clock, {"RATELIMIT_ENABLED": True}, database_url)
    with off.app_context():
        db.create_all()
    try:
        statuses = {off.test_client().post("/api/v2/auth/login", json={
            "email": "nobody@example.com", "password": "wrong"}).status_code for _ in range(8)}
        assert statuses == {401}
    finally:
        dispose_app(on)
        dispose_app(off)


def test_a_429_stays_a_429_when_the_limit_storage_fails_as_it_answers(client, user, monkeypatch,
                                                                      caplog):
    """Redis counted the request, then times out when asked when the window ends: the 429 gives
    the limit's whole period instead of escaping as a 500."""
    import redis

    from app.web.limit_storage import DatabaseStorage

    for _ in range(3):
        wrong_login(client)

    def hung(*_args, **_kwargs):
        raise redis.TimeoutError("Timeout reading from socket")

    monkeypatch.setattr(DatabaseStorage, "get_expiry", hung)
    response = wrong_login(client)
    assert response.status_code == 429, response.get_data(as_text=True)
    assert response.mimetype == "application/problem+json"
    assert response.headers["Retry-After"] == "60"  # "3 per minute": the whole minute
    assert response.get_json()["retry_after"] == 60
    assert "Retry-After is the limit's whole period" in caplog.text


def test_the_pages_429_stays_a_429_when_the_limit_storage_fails(app, client, user,
                                                                monkeypatch):
    import redis

    from app.web.limit_storage import DatabaseStorage
    from tests.support.pages import submit

    change_settings(app, LIMIT_LOGIN="2 per minute")
    for _ in range(2):
        submit(client, "/login", {"email": user.email, "password": "wrong password!"})

    def hung(*_args, **_kwargs):
        raise redis.ConnectionError("Connection refused")

    monkeypatch.setattr(DatabaseStorage, "get_expiry", hung)
    response = submit(client, "/login", {"email": user.email, "password": "wrong password!"})
    assert response.status_code == 429
    assert response.headers["Retry-After"] == "60"
    assert b"Try again in 60 seconds" in response.data


def test_with_redis_down_limits_are_counted_in_the_database_for_every_instance(
        tmp_path, clock, database_url, caplog):
    """flask-limiter's own fallback is each worker's memory (two instances of two workers
    allowed four times the limit). Counted in the shared database, a limit holds across them."""
    from app.extensions import db
    from tests.support.apps import build_app, dispose_app
    from tests.support.servers import free_port

    settings = {**LIMITS, "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}  # nothing there
    instances = [build_app(tmp_path / f"instance-{i}", clock, settings, database_url)
                 for i in range(2)]
    with instances[0].app_context():
        db.create_all()
    try:
        statuses = [
            instances[i % 2].test_client().post("/api/v2/auth/signup", json={
                "email": f"new{i}@example.com", "password": "a long enough passphrase"})
            for i in range(4)]
        assert [r.status_code for r in statuses] == [201, 201, 429, 429]
        assert 3500 < int(statuses[2].headers["Retry-After"]) <= 3600  # "2 per hour"
        assert "rate limits counted in the database" in caplog.text
        with instances[1].app_context():
            from app.models import RateLimitCounter
            assert db.session.query(RateLimitCounter).count() == 1  # one key: this address
    finally:
        for app in instances:
            dispose_app(app)


def test_verify_counts_against_no_limit(app, client, user, login, monkeypatch):
    """The limits live in the database: a verify (the hot path of every client site) must not
    pay for a write, or even a read, of theirs."""
    from app.web.limit_storage import DatabaseStorage

    calls = []
    for name in ("incr", "get", "get_expiry"):
        real = getattr(DatabaseStorage, name)
        monkeypatch.setattr(DatabaseStorage, name, lambda self, *a, _real=real, **k: (
            calls.append(a[0]) or _real(self, *a, **k)))
    access = login(user)["access_token"]
    assert calls  # the login was counted
    calls.clear()
    for _ in range(3):
        assert client.get("/api/v2/auth/verify",
                          headers={"Authorization": f"Bearer {access}"}).status_code == 200
    assert calls == []


def test_the_limiters_hooks_do_nothing_on_a_view_with_no_limit(app, client, user, login,
                                                               monkeypatch):
    """Not only no count: none of flask-limiter's own work either (its hooks cost a quarter of a
    verify's CPU time before they reached the request filter), while a login is checked."""
    from flask_limiter import Limiter

    evaluated: list[str] = []
    for name in ("_Limiter__evaluate_limits", "_Limiter__check_conditional_deductions"):
        real = getattr(Limiter, name)
        monkeypatch.setattr(Limiter, name, lambda self, *a, _real=real, _name=name: (
            evaluated.append(_name) or _real(self, *a)))
    access = login(user)["access_token"]
    assert {"_Limiter__evaluate_limits", "_Limiter__check_conditional_deductions"} <= set(evaluated)
    evaluated.clear()
    assert client.get("/api/v2/auth/verify",
                      headers={"Authorization": f"Bearer {access}"}).status_code == 200
    assert client.get("/.well-known/openid-configuration").status_code == 200
    assert evaluated == []


class TestRedisRestartedEmpty:
    """Redis counts a window's limit, fails (the database counts it again), and comes back
    empty: the documentation promises at most twice the limit in the window, not three times."""

    @pytest.fixture
    def redis(self, tmp_path):
        from tests.support.redis import start_redis

        server = start_redis(tmp_path / "redis")
        yield server
        server.stop()

    @pytest.fixture
    def app(self, tmp_path, clock, database_url, redis, monkeypatch):
        from app.extensions import db
        from app.web import limit_storage
        from tests.support.apps import build_app, dispose_app

        monkeypatch.setattr(limit_storage, "REDIS_REST_SECONDS", 0)  # ask Redis at every hit
        app = build_app(tmp_path / "instance", clock, {**LIMITS, "REDIS_URL": redis.url},
                        database_url)
        with app.app_context():
            db.create_all()
        yield app
        dispose_app(app)

    @staticmethod
    def signups(client, count):
        return [client.post("/api/v2/auth/signup", json={
            "email": f"new-{uuid.uuid4().hex[:8]}@example.com",
            "password": "a long enough passphrase"}).status_code for _ in range(count)]

    def test_the_window_allows_no_more_than_twice_its_limit(self, client, redis):
        assert self.signups(client, 3) == [201, 201, 429]  # "2 per hour", in Redis
        redis.stop()
        assert self.signups(client, 3) == [201, 201, 429]  # in the database
        redis.start()  # empty
        assert self.signups(client, 3) == [429, 429, 429]
        elsewhere = client.post("/api/v2/auth/signup", json={
            "email": "elsewhere@example.com", "password": "a long enough passphrase"},
            environ_base={"REMOTE_ADDR": "10.3.3.3"})
        assert elsewhere.status_code == 201  # (a refused sign-up counts for nothing)
        with redis.client() as counting:
            assert counting.keys("LIMITS:*signup*")  # counted in Redis again

    def test_a_redis_that_counted_a_whole_window_reads_no_database(self, client, redis,
                                                                   monkeypatch):
        from app.web import limit_storage

        assert self.signups(client, 1) == [201]
        with redis.client() as counting:
            [since] = counting.keys("LIMITS:*counting-since")
            counting.set(since, time.time() - 2 * 3600)  # "2 per hour": a window ago
        reads = []
        monkeypatch.setattr(limit_storage, "_live_row", lambda key: reads.append(key))
        assert self.signups(client, 2) == [201, 429]
        assert reads == []


def test_every_view_with_a_limit_is_checked_by_the_limiter(app):
    """Requests to views with no limit skip the limiter (app/web/ratelimits.py); a view whose
    limit the limiter knows must never be taken for one of them (a decorator that hid the
    limited function's name would make its limit silently go)."""
    from flask_limiter.util import get_qualified_name

    from app.extensions import limiter
    from app.web import ratelimits

    marked = limiter._marked_for_limiting  # the limiter's own record of decorated views
    limited = {endpoint for endpoint, view in app.view_functions.items()
               if get_qualified_name(view) in marked}
    assert len(limited) >= 20, sorted(limited)  # login, signup, refresh, ... on both APIs
    ratelimits._unlimited_endpoints.clear()  # decided afresh for this app's views
    skipped = set()
    for endpoint in app.view_functions:
        with app.test_request_context() as context:
            context.request.url_rule = type("Rule", (), {"endpoint": endpoint})()
            if ratelimits._no_limit_on_this_view():
                skipped.add(endpoint)
    assert not limited & skipped, sorted(limited & skipped)
    assert "api_v2.verify" in skipped
