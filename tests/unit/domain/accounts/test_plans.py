"""Plans' names for people (app/domain/accounts/plans.py `display_name`, SVC_PLAN_NAMES)."""

from __future__ import annotations

import pytest

from app import create_app
from app.domain.accounts import plans


@pytest.mark.parametrize(("names", "plan", "language", "shown"), [
    ({}, "pro", "de", "Pro"),
    ({}, "gold", "de", "gold"),  # no name: the word itself
    ({"gold": {"en": "Gold", "de": "Goldtarif"}}, "gold", "de", "Goldtarif"),
    ({"gold": {"en": "Gold", "de": "Goldtarif"}}, "gold", "fr", "Gold"),  # else English
    ({"gold": {"es": "Oro", "de": "Goldtarif"}}, "gold", "fr", "Oro"),  # else the first
    ({"gold": "Gold"}, "gold", "es", "Gold"),  # one text for every language
    ({"free": {"de": "Gratis!"}}, "free", "de", "Gratis!"),  # the operator's over ours
])
def test_the_name_a_person_reads(tmp_path, names, plan, language, shown):
    app = create_app({"INSTANCE_PATH": str(tmp_path), "PLAN_NAMES": names})
    with app.app_context():
        assert plans.display_name(plan, language) == shown


def test_our_own_names_are_words_the_pages_translate(tmp_path):
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    with app.app_context():
        assert plans.display_name("free", "de").message == "Free"


@pytest.mark.parametrize(("names", "message"), [
    ('["pro"]', "it is a JSON object of plans"),
    ('{"Gold Plan": "Gold"}', "'Gold Plan' is not a plan"),
    ('{"gold": ""}', "the name of gold is a text of at most 64"),
    ('{"gold": {"en": 5}}', "the name of gold is a text"),
    ('{"gold": {}}', "the name of gold is a text"),
    ('{"gold": "a\\u0007bell"}', "the name of gold is a text"),
])
def test_malformed_names_stop_the_start(monkeypatch, tmp_path, names, message):
    monkeypatch.setenv("SVC_PLAN_NAMES", names)
    with pytest.raises(RuntimeError, match="SVC_PLAN_NAMES must be a JSON object such as .*"
                                           + message):
        create_app({"INSTANCE_PATH": str(tmp_path)})
