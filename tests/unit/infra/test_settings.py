"""The settings as one typed, frozen value (app/infra/settings.py): parsed and checked once by
the factory, so that a misspelt or malformed setting stops the start with its name, never a
request."""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from app import create_app
from app.config import DEFAULTS
from app.infra.settings import SettingError, names, settings, settings_of
from tests.support.settings import change_settings

ROOT = Path(__file__).resolve().parents[3]


def _start(tmp_path, **overrides):
    return create_app({"INSTANCE_PATH": str(tmp_path), **overrides})


@pytest.mark.parametrize(("variable", "value"), [
    ("SVC_SESSION_CACHE_SECONDS", "abc"),  # a number
    ("SVC_RESET_TOKEN_TTL", "an hour"),  # a whole number, first read by a reset request
    ("SVC_ACCOUNT_DELETION_GRACE_DAYS", "1.5"),
    ("SVC_STEP_UP_SECONDS", "true"),  # JSON's true is no number either
    ("SVC_REQUIRE_EMAIL_CONFIRMATION", "maybe"),  # was truthy: every account had to confirm
    ("SVC_DEFAULT_PLAN", "pro\n"),  # a plan word, whole
    ("SVC_PLANS", "free,pro team"),
    ("SVC_LIMIT_LOGIN", "ten a minute"),  # flask-limiter's, first read by a sign-in
    ("SVC_LOG_FORMAT", "xml"),
    ("SVC_MAIL_TIMEOUT", "-1"),
])
def test_a_malformed_setting_stops_the_start_with_its_name(monkeypatch, tmp_path, variable,
                                                            value):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingError, match=f"^{variable}[: ]"):
        _start(tmp_path)


def test_a_misspelt_setting_stops_the_start_naming_the_one_meant(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_SESION_CACHE_SECONDS", "1")
    with pytest.raises(SettingError, match="^SVC_SESION_CACHE_SECONDS: there is no such "
                                           "setting; did you mean SVC_SESSION_CACHE_SECONDS"):
        _start(tmp_path)
    monkeypatch.setenv("SVC_SESION_CACHE_SECONDS".replace("SESION", "NOTHING_LIKE_IT"), "1")
    monkeypatch.delenv("SVC_SESION_CACHE_SECONDS")
    with pytest.raises(SettingError, match="^SVC_NOTHING_LIKE_IT_CACHE_SECONDS: there is no "):
        _start(tmp_path)


@pytest.mark.parametrize(("variable", "value"), [
    ("SVC_BIND", "127.0.0.1:8000"), ("SVC_TEST_DATABASE", "sqlite"), ("SVC_FUZZ_SEED", "1"),
    ("SVC_AUTH_URL", "http://127.0.0.1:5000"), ("SVC_CLIENT_ID", "ledger"),
    ("SVC_PREFERRED_URL_SCHEME", "https"), ("SVC_SQLALCHEMY_ECHO", "false"),
])
def test_names_other_programs_read_and_flasks_own_keys_start(monkeypatch, tmp_path, variable,
                                                             value):
    monkeypatch.setenv(variable, value)
    _start(tmp_path)


def test_a_callers_overrides_are_parsed_as_the_environment_is(tmp_path):
    """tests/support/apps.py's build_app, and any embedding program, pass a dict: the same
    parser, the same checks."""
    app = _start(tmp_path, RESET_TOKEN_TTL="120", SESSION_CACHE_SECONDS=2, PLANS=["a", "b"],
                 DEFAULT_PLAN="b", REQUIRE_EMAIL_CONFIRMATION="true")
    typed = settings_of(app)
    assert typed.reset_token_ttl == 120 and typed.session_cache_seconds == 2.0
    assert typed.plans == ("a", "b") and typed.require_email_confirmation is True
    with pytest.raises(SettingError, match="^SVC_RESET_TOKEN_TTL: 'abc' is not a whole number"):
        _start(tmp_path, RESET_TOKEN_TTL="abc")


def test_the_app_fixtures_settings_are_typed(app):
    with app.app_context():
        assert settings() is settings_of(app)
        assert settings().argon2_memory_cost == 64 and settings().ratelimit_enabled is False


def test_the_settings_are_frozen_and_a_change_is_checked_again(app):
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings_of(app).brand = "other"  # type: ignore[misc]
    change_settings(app, REQUIRE_EMAIL_CONFIRMATION=True)
    assert settings_of(app).require_email_confirmation is True
    with pytest.raises(SettingError, match="^SVC_PLANS"):
        change_settings(app, PLANS="free,Pro")


def test_every_setting_with_a_default_is_a_typed_field():
    """A setting added to DEFAULTS alone would be a raw dictionary read again."""
    assert set(DEFAULTS) <= set(names())


def _reads_config(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and node.attr == "config":
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_domain_reads_no_raw_configuration():
    reads = [read for path in sorted((ROOT / "app" / "domain").rglob("*.py"))
             for read in _reads_config(path)]
    assert reads == []


@pytest.mark.parametrize("command", [
    [sys.executable, "-m", "flask", "--app", "wsgi", "routes"],
    [str(Path(sys.executable).parent / "gunicorn"), "-c", "gunicorn.conf.py",
     "-b", "127.0.0.1:0", "wsgi:app"],
])
def test_the_command_line_and_gunicorn_say_which_setting_stops_them(tmp_path, command):
    environment = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT),
                   "SVC_INSTANCE_PATH": str(tmp_path), "SVC_SESSION_CACHE_SECONDS": "abc",
                   "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    done = subprocess.run(command, cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines()[-1] == (
        "svc-auth cannot start: SVC_SESSION_CACHE_SECONDS: 'abc' is not a number.")
    assert "Traceback" not in done.stderr
