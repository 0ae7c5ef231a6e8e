"""An upgrade from the previous release: a database made by that release's migrations, with an
account and its history in it, is migrated to this code's head, keeps every row, and the service
works on it (sign in, refresh, the audit trail). The previous release and the migration its
schema ended at are read from CHANGELOG.md (`Schema: migration \\`NNNN\\``); cutting a release
moves that line (docs/operators/upgrading.md). On SQLite, and on PostgreSQL when the suite runs
there."""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa
from alembic.script import ScriptDirectory
from flask import Flask
from flask_migrate import upgrade

from app import create_app
from app.domain.services import services
from app.extensions import db
from tests.support.accounts import PASSWORD
from tests.support.apps import dispose_app
from tests.test_migrations import _ONE_ROW_EACH, _columns_of, _rows, _type

ROOT = Path(__file__).resolve().parent.parent


def previous_release() -> tuple[str, str]:
    """(version, migration head) of the newest release that has a date in CHANGELOG.md."""
    changelog = (ROOT / "CHANGELOG.md").read_text()
    for version, body in re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d\d-\d\d\n(.*?)(?=^## )",
                                    changelog + "\n## ", re.MULTILINE | re.DOTALL):
        found = re.search(r"^Schema: migration `(\d{4})`", body, re.MULTILINE)
        assert found, f"CHANGELOG.md: release {version} names no migration"
        return version, found[1]
    raise AssertionError("CHANGELOG.md names no dated release")


def test_the_previous_release_head_is_an_ancestor_of_this_code(tmp_path):
    _, head = previous_release()
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path}/none.db"})
    script = ScriptDirectory(app.extensions["migrate"].directory)
    current = script.get_current_head()
    assert head in {r.revision for r in script.walk_revisions("base", current)}


def test_a_database_of_the_previous_release_upgrades_with_its_data(tmp_path, empty_database_url):
    _, head = previous_release()
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url,
                      "ARGON2_MEMORY_COST": 1024, "ARGON2_TIME_COST": 1,
                      "ARGON2_PARALLELISM": 1, "RATELIMIT_ENABLED": False,
                      "MAIL_URL": "memory://"})
    try:
        _upgrade_and_sign_in(app, head)
    finally:
        dispose_app(app)  # its outbox's thread, and every pooled connection


def _upgrade_and_sign_in(app: Flask, head: str) -> None:
    with app.app_context():
        upgrade(revision=head)
        # (no mail job: the outbox would try to send it)
        rows = {table: row for table, row in _ONE_ROW_EACH.items() if table != "mail_jobs"}
        rows["users"] = rows["users"] | {"password_hash": services().hasher.hash(PASSWORD)}
        with db.engine.begin() as connection:
            for table, row in rows.items():
                connection.execute(sa.table(table, *(sa.column(k, _type(v)) for k, v in
                                                     row.items())).insert(), row)
            before = _rows(connection)
        upgrade()
        with db.engine.connect() as connection:
            assert _columns_of(_rows(connection), before) == before

    client = app.test_client()
    signed_in = client.post("/api/v2/auth/login",
                            json={"email": "ada@example.com", "password": PASSWORD})
    assert signed_in.status_code == 200, signed_in.get_json()
    refreshed = client.post("/api/v2/auth/refresh",
                            json={"refresh_token": signed_in.get_json()["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.get_json()
    with app.app_context():
        events = db.session.execute(sa.text(
            "SELECT event FROM audit_events WHERE user_id = 'u-1'")).scalars().all()
        assert {"login", "login_succeeded"} <= set(events)
        assert db.session.execute(sa.text("SELECT created_at FROM users")).scalar() is not None
