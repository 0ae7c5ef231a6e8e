"""Captcha settings, and the checks that stop a start that could not work (issue 17, item 1)."""

from __future__ import annotations

import pytest

from app import create_app
from tests.support.captcha_standin import (
    TURNSTILE_PASS_SECRET,
    captcha_app_settings,  # noqa: F401 (its settings)
)

PRODUCTION = {"ENV": "production", "SECRET_KEY": "k" * 64, "PUBLIC_URL": "https://auth.example",
              "MAIL_URL": "file:///tmp/mail", "SQLALCHEMY_DATABASE_URI": "sqlite://"}


def test_captcha_is_off_by_default(tmp_path):
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert app.config["CAPTCHA_MODE"] == "off" and app.config["CAPTCHA_PROVIDER"] is None


def test_settings_come_from_the_environment(monkeypatch, tmp_path):
    for name, value in (("MODE", "report"), ("PROVIDER", "hcaptcha"), ("SECRET", "s"),
                        ("SITE_KEY", "k"), ("VERIFY_URL", "http://127.0.0.1:9/siteverify")):
        monkeypatch.setenv(f"SVC_CAPTCHA_{name}", value)
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert app.config["CAPTCHA_PROVIDER"] == "hcaptcha"
    assert app.config["CAPTCHA_VERIFY_URL"] == "http://127.0.0.1:9/siteverify"


@pytest.mark.parametrize(("settings", "message"), [
    ({"CAPTCHA_MODE": "maybe"}, "SVC_CAPTCHA_MODE must be"),
    ({"CAPTCHA_PROVIDER": "recaptcha-enterprise"}, "SVC_CAPTCHA_PROVIDER must be"),
    ({"CAPTCHA_MODE": "on", "CAPTCHA_PROVIDER": "turnstile"}, "needs SVC_CAPTCHA_PROVIDER"),
    ({"CAPTCHA_MIN_SCORE": 2}, "SVC_CAPTCHA_MIN_SCORE"),
    ({"CAPTCHA_TIMEOUT": 60}, "SVC_CAPTCHA_TIMEOUT"),
    ({"CAPTCHA_LOGIN_FAILURES": "three"}, "SVC_CAPTCHA_LOGIN_FAILURES"),
])
def test_settings_that_cannot_work_stop_the_start(tmp_path, settings, message):
    with pytest.raises(RuntimeError, match=message):
        create_app({"INSTANCE_PATH": str(tmp_path), **settings})


@pytest.mark.parametrize("mode", ["off", "report", "on"])
def test_production_refuses_a_provider_without_a_secret(tmp_path, mode):
    settings = {**PRODUCTION, "INSTANCE_PATH": str(tmp_path), "CAPTCHA_PROVIDER": "turnstile",
                "CAPTCHA_SITE_KEY": "k", "CAPTCHA_MODE": mode}
    with pytest.raises(RuntimeError, match="SVC_CAPTCHA_"):
        create_app(settings)
    create_app({**settings, "CAPTCHA_SECRET": "a real secret"})


def test_production_refuses_an_always_pass_test_secret(tmp_path):
    with pytest.raises(RuntimeError, match="test secret"):
        create_app({**PRODUCTION, "INSTANCE_PATH": str(tmp_path), "CAPTCHA_MODE": "on",
                    "CAPTCHA_PROVIDER": "turnstile", "CAPTCHA_SITE_KEY": "k",
                    "CAPTCHA_SECRET": TURNSTILE_PASS_SECRET})
