"""The configuration reference is generated from the settings' definitions: every setting has a
description (app/config_reference.py), and docs/operators/configuration.md holds exactly what
scripts/settings-reference generates from them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from app import config, config_reference

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "settings-reference"


def test_every_setting_has_a_description():
    described = {name for name, text in config_reference.DESCRIPTIONS.items() if text.strip()}
    missing = [name for name in config_reference.settings() if name not in described]
    assert missing == [], f"add a description to app/config_reference.py for {missing}"


def test_no_description_names_a_setting_that_does_not_exist():
    known = set(config_reference.settings())
    assert set(config_reference.DESCRIPTIONS) - known == set()
    assert config._CODE_ONLY.isdisjoint(known)  # a test's clock is no operator's setting


def test_each_description_is_one_sentence_or_more_of_the_operators_words():
    for name, text in config_reference.DESCRIPTIONS.items():
        assert text.endswith((".", ")")) and "\n" not in text, name


def test_the_reference_shows_each_default_as_the_environment_would_give_it():
    table = config_reference.reference_table()
    assert "| `SVC_RATELIMIT_ENABLED` | `true` |" in table
    assert "| `SVC_MAIL_URL` | `console://` |" in table
    assert "| `SVC_REDIS_URL` | unset |" in table
    assert "| `SVC_CLIENT_SITES` | `{}` |" in table
    assert "| `SVC_MAIL_RETRY_DELAY` | `2` |" in table
    assert "SVC_CLOCK" not in table
    assert len(table.splitlines()) == 2 + len(config_reference.settings())


def test_the_committed_page_is_what_the_settings_generate():
    result = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True,
                            text=True, check=False, cwd=ROOT)
    assert result.returncode == 0, result.stderr
