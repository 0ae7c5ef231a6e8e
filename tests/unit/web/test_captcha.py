"""Captcha on the JSON API: where it is asked, what a refusal looks like, and what is never
asked (issue 17, items 2-5)."""

from __future__ import annotations

import pytest

from app.domain.services import services
from tests.support.accounts import PASSWORD
from tests.support.captcha_standin import (
    captcha_app_settings,  # noqa: F401 (its settings)
    fresh_token,
)
from tests.support.servers import free_port as _closed_port
from tests.support.settings import change_settings

SIGNUP = "/api/v2/auth/signup"
FORGOT = "/api/v2/auth/forgot-password"
RESEND = "/api/v2/auth/resend-confirmation"
MAIL_ENDPOINTS = [FORGOT, RESEND]


def signup(client, token=None, email="new@example.com"):
    body = {"email": email, "password": PASSWORD}
    if token is not None:
        body["captcha_token"] = token
    return client.post(SIGNUP, json=body)


def assert_captcha_problem(response, code, provider="turnstile"):
    assert response.status_code == 422, response.get_json()
    body = response.get_json()
    assert response.mimetype == "application/problem+json"
    assert body["code"] == code
    assert body["errors"][0]["pointer"] == "#/captcha_token"
    assert body["captcha"] == {"provider": provider, "site_key": "stand-in-site-key"}


# Sign-up and the mail-sending endpoints: always asked ---------------------------------------

@pytest.mark.parametrize("token", [None, ""])
def test_signup_without_a_token_is_captcha_required(client, token):
    assert_captcha_problem(signup(client, token), "captcha_required")


def test_signup_with_a_solved_captcha_is_created(client, standin):
    response = signup(client, fresh_token())
    assert response.status_code == 201, response.get_json()
    call = standin.calls[-1]
    assert call["secret"] == "stand-in-secret" and call["response"].startswith("pass-")
    assert call["remoteip"] == "127.0.0.1"


@pytest.mark.parametrize("kind", ["fail", "elsewhere"])
def test_signup_with_a_refused_token_is_captcha_invalid(client, kind):
    assert_captcha_problem(signup(client, fresh_token(kind)), "captcha_invalid")


def test_a_token_is_accepted_once(client):
    token = fresh_token()
    assert signup(client, token, "one@example.com").status_code == 201
    assert_captcha_problem(signup(client, token, "two@example.com"), "captcha_invalid")


@pytest.mark.parametrize("captcha_extra", [{"CAPTCHA_PROVIDER": "recaptcha"}])
def test_recaptcha_v3_needs_the_minimum_score(client):
    assert_captcha_problem(signup(client, fresh_token("lowscore")), "captcha_invalid", "recaptcha")
    assert signup(client, fresh_token()).status_code == 201


def test_the_score_is_only_recaptchas(client):
    assert signup(client, fresh_token("lowscore")).status_code == 201


@pytest.mark.parametrize("captcha_extra", [{"CAPTCHA_ACTION": "signup"}])
def test_the_expected_action_when_one_is_set(client, standin):
    assert_captcha_problem(signup(client, fresh_token()), "captcha_invalid")
    standin.action = "signup"
    assert signup(client, fresh_token(), "b@example.com").status_code == 201


@pytest.mark.parametrize("captcha_extra", [{"CLIENT_SITES": {"symbols": {
    "redirect_uris": ["https://symbols.example/cb"], "origins": ["https://symbols.example"]}}}])
def test_a_registered_client_sites_hostname_passes(client, standin):
    standin.hostname = "symbols.example"
    assert signup(client, fresh_token()).status_code == 201


@pytest.mark.parametrize("hostname", [["127.0.0.1"], {"127.0.0.1": 1}, None, 7])
def test_a_hostname_that_is_no_string_is_refused_not_a_500(client, standin, hostname):
    """Whatever a provider (or something in its place) answers, the client gets a 422."""
    standin.hostname = hostname
    assert_captcha_problem(signup(client, fresh_token()), "captcha_invalid")


@pytest.mark.parametrize("endpoint", MAIL_ENDPOINTS)
def test_mail_endpoints_ask_for_a_captcha(client, endpoint):
    assert_captcha_problem(client.post(endpoint, json={"email": "a@example.com"}),
                           "captcha_required")
    response = client.post(endpoint, json={"email": "a@example.com",
                                           "captcha_token": fresh_token()})
    assert response.status_code == 202


def test_a_malformed_address_is_refused_before_the_captcha_is_spent(client, standin):
    response = client.post(FORGOT, json={"email": "not an address", "captcha_token": "x"})
    assert response.status_code == 422 and response.get_json()["code"] == "invalid_body"
    weak = client.post(SIGNUP, json={"email": "a@example.com", "password": "password",
                                     "captcha_token": "x"})
    assert weak.get_json()["errors"][0]["pointer"] == "#/password"
    assert standin.calls == []


# Provider down -------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["down", "slow", "garbage", "closed"])
@pytest.mark.parametrize("endpoint", [SIGNUP, *MAIL_ENDPOINTS])
def test_a_provider_that_does_not_answer_is_a_503(app, client, standin, endpoint, failure):
    standin.down = failure == "down"
    change_settings(app, CAPTCHA_TIMEOUT=0.3)  # the stand-in's slow answer takes 5 s
    if failure == "closed":
        change_settings(app, CAPTCHA_VERIFY_URL=f"http://127.0.0.1:{_closed_port()}/siteverify")
    token = fresh_token(failure if failure in ("slow", "garbage") else "pass")
    response = client.post(endpoint, json={"email": "a@example.com", "password": PASSWORD,
                                           "captcha_token": token} if endpoint == SIGNUP
                           else {"email": "a@example.com", "captcha_token": token})
    assert response.status_code == 503, response.get_json()
    assert response.headers["Retry-After"] == "30"
    assert response.get_json()["code"] == "captcha_unavailable"


def test_a_provider_down_is_logged_counted_and_audited(app, client, standin, caplog):
    from prometheus_client import REGISTRY

    from app.models import AuditEvent

    before = REGISTRY.get_sample_value("svc_auth_captcha_checks_total",
                                       {"purpose": "signup", "result": "unavailable"}) or 0
    standin.down = True
    assert signup(client, fresh_token()).status_code == 503
    after = REGISTRY.get_sample_value("svc_auth_captcha_checks_total",
                                      {"purpose": "signup", "result": "unavailable"})
    assert after == before + 1
    assert "captcha provider unavailable" in caplog.text
    with app.app_context():
        from app.extensions import db
        events = db.session.query(AuditEvent.event).all()
    assert ("captcha_unavailable",) in events


# Modes ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("captcha_mode", ["report"])
def test_report_mode_verifies_and_counts_but_refuses_nothing(client, standin):
    from prometheus_client import REGISTRY

    def failed() -> float:
        return REGISTRY.get_sample_value("svc_auth_captcha_checks_total",
                                         {"purpose": "signup", "result": "failed"}) or 0

    before = failed()
    assert signup(client, None, "a@example.com").status_code == 201
    assert signup(client, fresh_token("fail"), "b@example.com").status_code == 201
    assert failed() == before + 1
    standin.down = True
    assert signup(client, fresh_token(), "c@example.com").status_code == 201


@pytest.mark.parametrize("captcha_mode", ["off"])
def test_off_mode_accepts_and_ignores_the_field(client, standin, user):
    assert signup(client, "anything").status_code == 201
    v1 = client.post("/api/v1/auth/login", json={"email": user.email, "password": PASSWORD,
                                                 "captcha_token": ""})
    assert v1.status_code == 200
    for endpoint in MAIL_ENDPOINTS:
        assert client.post(endpoint, json={"email": user.email}).status_code == 202
        assert client.post(endpoint, json={"email": user.email,
                                           "captcha_token": ""}).status_code == 202
    for _ in range(5):
        client.post("/api/v2/auth/login", json={"email": user.email, "password": "wrong"})
    assert client.post("/api/v2/auth/login", json={"email": user.email,
                                                   "password": PASSWORD}).status_code == 200
    assert standin.calls == []


@pytest.mark.parametrize("captcha_mode", ["report"])
@pytest.mark.parametrize("endpoint", MAIL_ENDPOINTS)
def test_report_mode_sends_the_mail_without_a_token(client, endpoint):
    assert client.post(endpoint, json={"email": "a@example.com"}).status_code == 202


# Cost: a failed captcha never costs an argon2 hash -------------------------------------------

def test_a_refused_captcha_costs_no_password_hash(app, client, user, monkeypatch):
    for _ in range(3):  # from here on, this email's sign-ins are asked for a captcha
        client.post("/api/v2/auth/login", json={"email": user.email, "password": "wrong"})
    with app.app_context():
        hasher_class = type(services().hasher)
    calls = []
    for name in ("verify", "hash"):
        original = getattr(hasher_class, name)
        monkeypatch.setattr(hasher_class, name, lambda *a, _o=original, _n=name, **k: (
            calls.append(_n), _o(*a, **k))[1])
    assert_captcha_problem(signup(client, fresh_token("fail")), "captcha_invalid")
    response = client.post("/api/v2/auth/login", json={"email": user.email, "password": "wrong",
                                                       "captcha_token": fresh_token("fail")})
    assert_captcha_problem(response, "captcha_invalid")
    assert calls == []
    assert signup(client, fresh_token()).status_code == 201  # the spy sees a real hash
    assert calls == ["hash"]


@pytest.fixture
def redis_settings(redis_server, captcha_extra):
    redis_server.flush()
    captcha_extra["REDIS_URL"] = redis_server.url


@pytest.mark.usefixtures("redis_settings")
def test_a_token_is_accepted_once_through_redis(app, client, redis_server):
    token = fresh_token()
    assert signup(client, token, "one@example.com").status_code == 201
    assert_captcha_problem(signup(client, token, "two@example.com"), "captcha_invalid")
    assert any(key.startswith(b"svc-auth:captcha:") for key in redis_server.client().scan_iter())
