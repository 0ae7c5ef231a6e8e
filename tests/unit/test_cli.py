"""flask users / keys / sessions commands."""

import click
import jwt
import pytest
from sqlalchemy import select

from app import create_app
from app.domain.services import services
from app.extensions import db
from app.infra.keys import generate_material
from app.models import AuditEvent, AuthSession, FailureCounter, User
from tests.support.admin import printed_credentials
from tests.support.cli import run
from tests.support.http import bearer


def without_help(command, path):
    """Every command and option under `command` (recursively into groups) with no help text;
    not `--help` itself, which click describes."""
    missing = [path] if not (command.help or command.short_help) else []
    missing += [f"{path} {param.opts[0]}" for param in command.params
                if isinstance(param, click.Option) and not param.help]
    for name, sub in getattr(command, "commands", {}).items():
        missing += without_help(sub, f"{path} {name}")
    return missing


def test_every_command_group_and_option_has_help(app):
    commands = app.cli.commands
    assert {"users", "sites", "keys", "sessions", "outbox", "events", "clients",
            "purge"} <= set(commands)
    assert {"list", "show", "enable", "set-plan"} <= set(commands["users"].commands)
    assert [m for name, sub in commands.items() for m in without_help(sub, name)] == []
    # not vacuous: a command or an option without help is found
    bare = click.Group("bare", commands=[click.Command("x", params=[click.Option(["--y"])])])
    assert without_help(bare, "bare") == ["bare", "bare x", "bare x --y"]


def test_help_is_printed_for_every_users_command(app):
    result = run(app, "users", "--help")
    assert result.exit_code == 0
    for name in ("create", "list", "show", "enable", "disable", "set-plan", "delete"):
        assert f"  {name} " in result.output
    listed = run(app, "users", "list", "--help").output
    assert "--search TEXT" in listed and "--after TEXT" in listed and "--disabled / --active" \
        in listed


def test_users_create_then_login(app, client):
    result = run(app, "users", "create", "op@example.com", "--password",
                 "a long enough passphrase", "--name", "Operator", "--plan", "pro")
    assert result.exit_code == 0, result.output
    body = client.post("/api/v2/auth/login", json={"email": "op@example.com",
                                                   "password": "a long enough passphrase"})
    assert body.get_json()["user"] | {"id": None} == {
        "id": None, "email": "op@example.com", "full_name": "Operator", "plan": "pro",
        "email_verified": False}


def test_users_create_prompts_for_the_password(app):
    result = run(app, "users", "create", "op@example.com",
                 input="a long enough passphrase\na long enough passphrase\n")
    assert result.exit_code == 0, result.output
    assert "a long enough passphrase" not in result.output


def test_users_create_applies_the_policy_and_refuses_duplicates(app, user):
    weak = run(app, "users", "create", "x@example.com", "--password", "password")
    assert weak.exit_code != 0 and "common" in weak.output
    taken = run(app, "users", "create", user.email.upper(), "--password", "another passphrase")
    assert taken.exit_code != 0 and "already exists" in taken.output


def test_users_set_plan_shows_in_the_next_token(app, client, user, login):
    assert run(app, "users", "set-plan", user.email, "pro").exit_code == 0
    assert login(user)["user"]["plan"] == "pro"


def test_unknown_users_are_a_clear_error(app):
    result = run(app, "users", "set-plan", "ghost@example.com", "pro")
    assert result.exit_code != 0 and "No account" in result.output
    assert "Traceback" not in result.output


def test_users_disable_refuses_login(app, client, user):
    assert run(app, "users", "disable", user.email).exit_code == 0
    response = client.post("/api/v2/auth/login",
                           json={"email": user.email, "password": user.password})
    assert response.status_code == 401


def test_sessions_purge_expired_deletes_only_ended_sessions(app, client, user, login, clock):
    ended, live = login(user), login(user)
    client.post("/api/v2/auth/logout", headers={"Authorization": f"Bearer {ended['access_token']}"})
    clock.advance(2 * 24 * 3600)
    result = run(app, "sessions", "purge-expired")
    assert result.exit_code == 0 and "Deleted 1" in result.output
    with app.app_context():
        assert len(db.session.scalars(select(AuthSession)).all()) == 1
        assert db.session.scalars(select(User)).one().email == user.email
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": live["refresh_token"]}).status_code == 200


class TestFailureCounters:
    @pytest.fixture
    def settings(self):
        return {"RATELIMIT_ENABLED": True}

    def test_purge_expired_also_deletes_failure_counters_of_windows_long_past(self, app, client,
                                                                              clock):
        client.post("/api/v2/auth/login", json={"email": "old@example.com", "password": "guess"})
        clock.advance(3 * 24 * 3600)  # a day past the end of a one-day window
        client.post("/api/v2/auth/login", json={"email": "new@example.com", "password": "guess"})
        result = run(app, "sessions", "purge-expired")
        # old@'s two, per address and overall; and the rate-limit counters (in the database too)
        # of the two logins, whose windows of a minute ended by the moved clock.
        assert "Deleted 5 failure counters" in result.output
        with app.app_context():
            assert len(db.session.scalars(select(FailureCounter)).all()) == 2


# keys revoke / list (issue 12 item 8) -----------------------------------------------------------

def kid_of(token):
    return jwt.get_unverified_header(token)["kid"]


def test_keys_revoke_takes_a_kid_that_starts_with_a_dash(app):
    """base64url kids start with "-" one time in 64: such a kid is the argument, not an unknown
    option (CI once drew a signing key "-F...", and the command refused to revoke it)."""
    result = run(app, "keys", "revoke", "-Fnot-a-key")
    assert result.exit_code == 1, result.output
    assert "No key '-Fnot-a-key' is in force" in result.output


def test_keys_revoke_of_the_signing_key_refuses_its_tokens_at_once(app, client, user, login):
    """A leaked signing key: its tokens are refused at once, even one verified (and cached) just
    before; the command puts a new signing key in its place and says so; the audit trail has it."""
    token = login(user)["access_token"]
    assert client.get("/api/v2/auth/verify", headers=bearer(token)).status_code == 200
    leaked = kid_of(token)
    result = run(app, "keys", "revoke", leaked)
    assert result.exit_code == 0, result.output
    assert f"Revoked {leaked}" in result.output and "new signing key" in result.output
    refused = client.get("/api/v2/auth/verify", headers=bearer(token))
    assert refused.status_code == 401 and refused.get_json()["code"] == "invalid_token"
    fresh = login(user)["access_token"]
    assert kid_of(fresh) != leaked and kid_of(fresh) in result.output
    assert client.get("/api/v2/auth/verify", headers=bearer(fresh)).status_code == 200
    with app.app_context():
        [event] = db.session.scalars(
            select(AuditEvent).where(AuditEvent.event == "signing_key_revoked")).all()
        assert event.user_agent == f"flask keys revoke {leaked}"


def test_keys_revoke_of_a_retired_key_keeps_the_signing_key(app, client, user, login):
    old_token = login(user)["access_token"]
    assert run(app, "keys", "rotate").exit_code == 0
    new_token = login(user)["access_token"]
    result = run(app, "keys", "revoke", kid_of(old_token))
    assert result.exit_code == 0, result.output
    assert "new signing key" not in result.output
    assert client.get("/api/v2/auth/verify", headers=bearer(old_token)).status_code == 401
    assert client.get("/api/v2/auth/verify", headers=bearer(new_token)).status_code == 200


def test_keys_revoke_of_an_unknown_kid_is_a_clear_error(app):
    result = run(app, "keys", "revoke", "no-such-kid")
    assert result.exit_code != 0
    assert "No key 'no-such-kid'" in result.output and "keys list" in result.output
    assert "Traceback" not in result.output


def test_keys_revoke_with_static_keys_says_how(tmp_path):
    static = create_app({"INSTANCE_PATH": str(tmp_path / "instance"),
                         "SQLALCHEMY_DATABASE_URI": "sqlite://", "SECRET_KEY": "test",
                         "JWT_KEYS": [generate_material("ES256"), generate_material("ES256")]})
    with static.app_context():
        second = services().access_tokens.keyring.in_force()[1].kid
    result = run(static, "keys", "revoke", second)
    assert result.exit_code != 0
    assert "removing it from SVC_JWT_KEYS" in result.output
    with static.app_context():
        assert services().access_tokens.keyring.verification_key(second) is not None


def test_keys_list_shows_what_each_key_does(app, clock):
    with app.app_context():
        first = services().access_tokens.keyring.signing_key().kid
    assert run(app, "keys", "rotate").exit_code == 0
    result = run(app, "keys", "list")
    assert result.exit_code == 0, result.output
    signing, retired = result.output.splitlines()
    assert " ES256  signs, created " in signing and first not in signing
    day = clock.now.strftime("%Y-%m-%d")
    assert retired.startswith(f"{first}  ES256  retired {day}")
    assert "verifies only tokens issued before then, until" in retired


def test_clients_add_prints_the_secret_once_and_its_token_has_the_scopes(app, client):
    added = run(app, "clients", "add", "billing", "--scope", "users:plan")
    assert added.exit_code == 0, added.output
    assert "client_id billing" in added.output
    secret = next(line.split()[1] for line in added.output.splitlines()
                  if line.startswith("client_secret "))
    token = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                        auth=("billing", secret)).get_json()
    assert token["scope"] == "users:plan"
    assert secret not in run(app, "clients", "list").output
    assert run(app, "clients", "add", "billing", "--scope", "users:read").exit_code != 0
    assert run(app, "clients", "add", "other", "--scope", "users:everything").exit_code != 0
    rotated = run(app, "clients", "rotate-secret", "billing")
    assert rotated.exit_code == 0
    stale = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                        auth=("billing", secret))
    assert stale.status_code == 401
    assert run(app, "clients", "remove", "billing").exit_code == 0
    assert run(app, "clients", "remove", "billing").exit_code != 0


def test_a_service_client_may_not_take_a_sites_name_nor_a_site_a_clients(app):
    assert run(app, "clients", "add", "ledger", "--scope", "users:read").exit_code == 0
    site = run(app, "sites", "add", "ledger", "--redirect-uri", "https://ledger.example/cb")
    assert site.exit_code != 0 and "service client" in site.output
    assert run(app, "sites", "add", "notes", "--redirect-uri",
               "https://notes.example/cb").exit_code == 0
    clash = run(app, "clients", "add", "notes", "--scope", "users:read")
    assert clash.exit_code != 0 and "site" in clash.output


def test_operator_role_and_enable_are_audited_as_the_cli(app, user):
    assert run(app, "users", "grant-operator", user.email).exit_code == 0
    assert run(app, "users", "disable", user.email).exit_code == 0
    assert run(app, "users", "enable", user.email).exit_code == 0
    assert run(app, "users", "set-plan", user.email, "Gold Plan!").exit_code != 0
    with app.app_context():
        stored = db.session.get(User, user.id)
        assert stored.operator and stored.disabled_at is None and stored.plan == "free"
        events = {(e.event, e.actor) for e in db.session.scalars(
            select(AuditEvent).where(AuditEvent.user_id == user.id))}
    assert {("operator_granted", "cli"), ("account_disabled", "cli"),
            ("account_enabled", "cli")} <= events


def test_clients_add_takes_the_scopes_by_their_names_in_the_api(app, client):
    added = run(app, "clients", "add", "billing", "--scope", "users:plan", "--scope", "audit:read")
    assert added.exit_code == 0, added.output
    assert "scopes users:plan audit:read\n" in added.output
    credentials = printed_credentials(added.output)
    assert credentials[0] == "billing"
    issued = client.post("/oauth2/token", data={"grant_type": "client_credentials"},
                         auth=credentials)
    assert issued.get_json()["scope"] == "users:plan audit:read"
    assert run(app, "clients", "list").output == "billing: users:plan audit:read\n"
    unknown = run(app, "clients", "add", "other", "--scope", "USERS_PLAN")
    assert unknown.exit_code != 0 and "'users:plan'" in unknown.output


def test_users_delete_closes_the_account_for_the_grace_period(app, client, user, login):
    tokens = login(user)
    closed = run(app, "users", "delete", user.email)
    assert closed.exit_code == 0 and "erased after" in closed.output
    assert client.post("/api/v2/auth/refresh",
                       json={"refresh_token": tokens["refresh_token"]}).status_code == 401
    assert run(app, "users", "enable", user.email).exit_code != 0
