"""Settings from SVC_* variables, and the checks that stop an unsafe start."""

import json

import pytest

from app import create_app


def test_settings_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_ACCESS_TOKEN_TTL", "600")
    monkeypatch.setenv("SVC_CLIENT_SITES", '{"symbols": {"redirect_uris": []}}')
    monkeypatch.setenv("SVC_LIMIT_LOGIN", "5 per minute")
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert app.config["ACCESS_TOKEN_TTL"] == 600
    assert app.config["CLIENT_SITES"] == {"symbols": {"redirect_uris": []}}
    assert app.config["LIMIT_LOGIN"] == "5 per minute"


def test_the_embedded_default_shares_one_secret_per_instance(tmp_path):
    first = create_app({"INSTANCE_PATH": str(tmp_path)})
    second = create_app({"INSTANCE_PATH": str(tmp_path)})
    assert first.config["SECRET_KEY"] == second.config["SECRET_KEY"]
    assert len(first.config["SECRET_KEY"]) >= 64
    assert (tmp_path / "svc-auth.db").parent.exists()


@pytest.mark.parametrize(("setting", "value", "message"), [
    ("SVC_ENV", "production", "SVC_SECRET_KEY"),
    ("SVC_JWT_ALG", "none", "SVC_JWT_ALG"),
    ("SVC_ACCESS_TOKEN_TTL", "86400", "SVC_ACCESS_TOKEN_TTL"),
    ("SVC_REFRESH_REUSE_GRACE", "3600", "SVC_REFRESH_REUSE_GRACE"),
    ("SVC_LIMIT_LOGIN_FAILURES", "a hundred a day", "SVC_LIMIT_LOGIN_FAILURES"),
    ("SVC_PUSHED_REQUESTS_PER_CLIENT", "0", "SVC_PUSHED_REQUESTS_PER_CLIENT"),
    ("SVC_PUSHED_REQUESTS_PER_ADDRESS", "-1", "SVC_PUSHED_REQUESTS_PER_ADDRESS"),
])
def test_unsafe_settings_stop_the_start(monkeypatch, tmp_path, setting, value, message):
    monkeypatch.setenv(setting, value)
    with pytest.raises(RuntimeError, match=message):
        create_app({"INSTANCE_PATH": str(tmp_path)})


def test_access_tokens_may_live_seconds_outside_production(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_ACCESS_TOKEN_TTL", "5")
    assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["ACCESS_TOKEN_TTL"] == 5
    monkeypatch.setenv("SVC_ACCESS_TOKEN_TTL", "4")
    with pytest.raises(RuntimeError, match="between 5 and 3600"):
        create_app({"INSTANCE_PATH": str(tmp_path)})


@pytest.mark.parametrize(("ttl", "starts"), [("59", False), ("60", True), ("3600", True),
                                             ("3601", False), ("5", False)])
def test_production_keeps_access_tokens_between_a_minute_and_an_hour(monkeypatch, tmp_path,
                                                                     ttl, starts):
    monkeypatch.setenv("SVC_ENV", "production")
    monkeypatch.setenv("SVC_SECRET_KEY", "x" * 64)
    monkeypatch.setenv("SVC_PUBLIC_URL", "https://auth.example")
    monkeypatch.setenv("SVC_MAIL_URL", f"file://{tmp_path / 'mail'}")
    monkeypatch.setenv("SVC_ACCESS_TOKEN_TTL", ttl)
    if starts:
        assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["ACCESS_TOKEN_TTL"] == int(ttl)
    else:
        with pytest.raises(RuntimeError, match="between 60 and 3600 seconds when SVC_ENV"):
            create_app({"INSTANCE_PATH": str(tmp_path)})


def test_production_needs_an_https_public_url(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_ENV", "production")
    monkeypatch.setenv("SVC_SECRET_KEY", "x" * 64)
    with pytest.raises(RuntimeError, match="https"):
        create_app({"INSTANCE_PATH": str(tmp_path)})


def test_the_clock_cannot_be_set_from_the_environment(monkeypatch, tmp_path):
    from app.domain.clock import system_clock

    monkeypatch.setenv("SVC_CLOCK", '"anything"')
    assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["CLOCK"] is system_clock


GOOD_SITE = {"redirect_uris": ["https://ledger.example/cb"], "origins": ["https://ledger.example"]}


@pytest.mark.parametrize(("entry", "message"), [
    ({**GOOD_SITE, "first_party": "false"}, "first_party is true or false"),
    ({**GOOD_SITE, "email_code_sign_in": "false"}, "email_code_sign_in is true or false"),
    ({**GOOD_SITE, "redirect_uris": "https://ledger.example/cb"}, "redirect_uris is a list"),
    ({**GOOD_SITE, "redirect_uris": ["https://user@ledger.example/cb"]}, "no user"),
    ({**GOOD_SITE, "scopes": ["openid", "admin"]}, "Unknown scopes"),
    ({**GOOD_SITE, "token_endpoint_auth_method": "client_secret_basic"}, "needs client_secret"),
    ({**GOOD_SITE, "client_secret_sha256": "not-hex"}, "64 lower-case hex"),
])
def test_a_mistyped_client_site_stops_the_start(monkeypatch, tmp_path, entry, message):
    """A site from SVC_CLIENT_SITES follows the rules `sites add` does: "first_party": "false",
    read as true, would have skipped the consent page of a third-party site."""
    monkeypatch.setenv("SVC_CLIENT_SITES", json.dumps({"ledger": entry}))
    with pytest.raises(RuntimeError, match=r"SVC_CLIENT_SITES\['ledger'\]: .*" + message):
        create_app({"INSTANCE_PATH": str(tmp_path)})


def test_a_well_formed_client_site_starts(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_CLIENT_SITES", json.dumps({"ledger": {**GOOD_SITE,
                                                                  "first_party": False}}))
    assert "ledger" in create_app({"INSTANCE_PATH": str(tmp_path)}).config["CLIENT_SITES"]


# The plan catalogue (issue 26) ------------------------------------------------------------------

@pytest.mark.parametrize(("plans", "message"), [
    ("free,,pro", "'' is not a plan"),
    ("free,Pro", "'Pro' is not a plan"),
    ("free pro", "'free pro' is not a plan"),
    ("free,pro,free", "a plan is named twice"),
    ("free," + "x" * 33, "is not a plan"),
    ('{"free": 1}', "a list of plans"),
])
def test_a_malformed_plan_catalogue_stops_the_start(monkeypatch, tmp_path, plans, message):
    monkeypatch.setenv("SVC_PLANS", plans)
    with pytest.raises(RuntimeError, match=r'SVC_PLANS must be plans separated by commas, such '
                                           r'as "free,pro,team": .*' + message):
        create_app({"INSTANCE_PATH": str(tmp_path)})


def test_the_default_plan_must_be_in_the_catalogue(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_PLANS", "basic,pro")
    with pytest.raises(RuntimeError, match=r"SVC_DEFAULT_PLAN is free, which is not one of "
                                           r"SVC_PLANS \(basic, pro\)"):
        create_app({"INSTANCE_PATH": str(tmp_path)})
    monkeypatch.setenv("SVC_DEFAULT_PLAN", "basic")
    assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["DEFAULT_PLAN"] == "basic"
    monkeypatch.setenv("SVC_DEFAULT_PLAN", "Basic Plan")
    with pytest.raises(RuntimeError, match="SVC_DEFAULT_PLAN must be a plan: up to 32"):
        create_app({"INSTANCE_PATH": str(tmp_path)})


@pytest.mark.parametrize("plans", ["free,pro,team", " free , pro ", "free", '["free","pro"]',
                                   "", "   "])
def test_a_well_formed_plan_catalogue_starts(monkeypatch, tmp_path, plans):
    monkeypatch.setenv("SVC_PLANS", plans)
    assert create_app({"INSTANCE_PATH": str(tmp_path)}).config["DEFAULT_PLAN"] == "free"


def test_a_number_is_a_plan_word_too(monkeypatch, tmp_path):
    """Flask reads SVC_* values as JSON where they are: SVC_PLANS=2026 comes as a number."""
    monkeypatch.setenv("SVC_PLANS", "2026")
    monkeypatch.setenv("SVC_DEFAULT_PLAN", "2026")
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    from app.domain.accounts import plans
    with app.app_context():
        assert plans.catalogue() == ("2026",) and plans.default() == "2026"


def test_the_outbox_settings_come_from_the_environment(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("SVC_OUTBOX_POLL_SECONDS", "2.5")
    monkeypatch.setenv("SVC_OUTBOX_LEASE_SECONDS", "300")
    outbox = create_app({"INSTANCE_PATH": str(tmp_path)}).extensions["svc-outbox"]
    assert (outbox.poll_seconds, outbox.lease.total_seconds()) == (2.5, 300)
    assert [lane.name for lane in outbox.lanes] == ["mail", "events"]
    assert "deprecated" not in caplog.text


def test_the_outbox_settings_old_names_are_read_for_one_release_with_a_warning(
        monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("SVC_MAIL_POLL_SECONDS", "3")
    monkeypatch.setenv("SVC_MAIL_LEASE_SECONDS", "240")
    app = create_app({"INSTANCE_PATH": str(tmp_path)})
    outbox = app.extensions["svc-outbox"]
    assert (outbox.poll_seconds, outbox.lease.total_seconds()) == (3, 240)
    assert "MAIL_POLL_SECONDS" not in app.config  # nothing reads the old name any more
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "SVC_MAIL_POLL_SECONDS is deprecated" in " ".join(warned)
    assert "use SVC_OUTBOX_LEASE_SECONDS" in " ".join(warned)


def test_a_new_outbox_setting_wins_over_its_old_name(monkeypatch, tmp_path):
    monkeypatch.setenv("SVC_MAIL_POLL_SECONDS", "3")
    monkeypatch.setenv("SVC_OUTBOX_POLL_SECONDS", "1")  # the default, given: it still wins
    outbox = create_app({"INSTANCE_PATH": str(tmp_path)}).extensions["svc-outbox"]
    assert outbox.poll_seconds == 1
