"""The providers' documented test keys, as the stand-in answers them: a service configured with
an always-pass secret accepts the dummy token, with an always-fail one refuses it."""

from __future__ import annotations

import pytest

from tests.support import captcha_standin as keys
from tests.support.accounts import PASSWORD
from tests.support.captcha_standin import captcha_app_settings  # noqa: F401 (its settings)

CASES = [
    ("turnstile", keys.TURNSTILE_PASS_SECRET, keys.TURNSTILE_PASS_SITE_KEY,
     keys.TURNSTILE_DUMMY_TOKEN, 201),
    ("turnstile", keys.TURNSTILE_FAIL_SECRET, keys.TURNSTILE_PASS_SITE_KEY,
     keys.TURNSTILE_DUMMY_TOKEN, 422),
    ("turnstile", keys.TURNSTILE_SPENT_SECRET, keys.TURNSTILE_PASS_SITE_KEY,
     keys.TURNSTILE_DUMMY_TOKEN, 422),
    ("hcaptcha", keys.HCAPTCHA_SECRET, keys.HCAPTCHA_SITE_KEY, keys.HCAPTCHA_TOKEN, 201),
    ("hcaptcha", keys.HCAPTCHA_SECRET, keys.HCAPTCHA_SITE_KEY, "not-the-test-token", 422),
    ("recaptcha", keys.RECAPTCHA_V2_SECRET, "site", "any-token", 201),
]


@pytest.fixture(params=CASES, ids=lambda case: f"{case[0]}-{case[4]}")
def case(request):
    return request.param


@pytest.fixture
def captcha_extra(case):
    provider, secret, site_key, _token, _status = case
    return {"CAPTCHA_PROVIDER": provider, "CAPTCHA_SECRET": secret, "CAPTCHA_SITE_KEY": site_key}


def test_documented_test_keys(client, case):
    _provider, _secret, _site_key, token, status = case
    response = client.post("/api/v2/auth/signup", json={
        "email": "a@example.com", "password": PASSWORD, "captcha_token": token})
    assert response.status_code == status, response.get_json()
