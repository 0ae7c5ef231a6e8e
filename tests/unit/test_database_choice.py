"""`flask ...` refuses to fall back on the instance folder's SQLite file where that would be a
guess (app/database_choice.py): under SVC_ENV=production, and in an instance folder the service
ran from on PostgreSQL. The real `flask` command, as an operator types it."""

from __future__ import annotations

import secrets
from pathlib import Path

from tests.support.server import flask_cli, service_environment

POSTGRES_URL = "postgresql+psycopg://svc@127.0.0.1:9/svc"  # never dialled: nothing connects


def _env(instance: Path, **settings: str) -> dict[str, str]:
    return service_environment(instance, settings)


def test_production_without_a_database_url_stops_with_a_clear_error(tmp_path: Path) -> None:
    env = _env(tmp_path / "instance", SVC_ENV="production",
               SVC_SECRET_KEY=secrets.token_urlsafe(48), SVC_PUBLIC_URL="https://auth.example",
               SVC_MAIL_URL=f"file://{tmp_path / 'mail'}")
    result = flask_cli(env, "db", "upgrade")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "SVC_DATABASE_URL is not set (SVC_ENV=production)" in result.stderr
    assert not (tmp_path / "instance" / "svc-auth.db").exists()
    # Given the URL, the same command goes ahead (here on a SQLite file named on purpose).
    env["SVC_DATABASE_URL"] = f"sqlite:///{tmp_path / 'chosen.db'}"
    assert flask_cli(env, "version").returncode == 0


def test_an_instance_set_up_on_postgresql_refuses_the_local_file(tmp_path: Path) -> None:
    instance = tmp_path / "instance"
    served = flask_cli(_env(instance, SVC_DATABASE_URL=POSTGRES_URL), "version")
    assert served.returncode == 0, served.stderr
    assert (instance / "database-kind").read_text() == "postgresql\n"

    for command in (("users", "list"), ("db", "upgrade"), ("version",)):
        result = flask_cli(_env(instance), *command)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert "SVC_DATABASE_URL is not set" in result.stderr
        assert "runs on postgresql" in result.stderr
    assert not (instance / "svc-auth.db").exists()


def test_the_embedded_default_still_needs_no_setting(tmp_path: Path) -> None:
    result = flask_cli(_env(tmp_path / "instance"), "version")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "instance" / "svc-auth.db").exists()


def test_version_names_the_release_and_its_schema(tmp_path: Path) -> None:
    from app.version import VERSION

    result = flask_cli(_env(tmp_path / "instance"), "version")
    assert result.stdout.startswith(f"svc-auth {VERSION} (schema: migration ")
