"""The Alembic migrations build the schema the models describe, on an empty database."""

import logging

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade

from app import create_app
from app.extensions import db


def test_upgrade_builds_exactly_the_models_schema_and_downgrade_removes_it(tmp_path,
                                                                         database_url):
    """On SQLite, and on PostgreSQL when the suite runs there."""
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": database_url})
    with app.app_context():
        upgrade()
        with db.engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(connection), db.metadata)
        assert diff == []
        downgrade(revision="base")
        with db.engine.connect() as connection:
            tables = set(db.inspect(connection).get_table_names())
        assert tables <= {"alembic_version"}
        db.engine.dispose()


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_addresses_are_canonicalised_and_collisions_reported_not_merged(tmp_path, database_url):
    """Migration 0004 (issue 12, item 2): every address is re-keyed to its canonical form, and
    two rows that would share one are left as they were and named in the log."""
    from datetime import UTC, datetime

    import sqlalchemy as sa

    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": database_url})
    at = datetime(2026, 1, 1, tzinfo=UTC).replace(tzinfo=None)
    rows = [  # (id, email as stored before, its casefold key)
        ("u-grace", "Grace@example.com", "grace@example.com"),
        ("u-umlaut", "ada@bücher.de", "ada@bücher.de"),
        ("u-puny", "ADA@xn--bcher-kva.de", "ada@xn--bcher-kva.de"),
    ]
    with app.app_context():
        upgrade(revision="0003")
        with db.engine.begin() as connection:
            for user_id, email, key in rows:
                connection.execute(sa.text(
                    "INSERT INTO users (id, email, email_key, full_name, plan, email_verified,"
                    " created_at) VALUES (:id, :email, :key, '', 'free', false, :at)"),
                    {"id": user_id, "email": email, "key": key, "at": at})
            connection.execute(sa.text(
                "INSERT INTO one_time_tokens (token_hash, user_id, purpose, email, created_at,"
                " expires_at) VALUES ('h', 'u-grace', 'reset_password', 'Grace@example.com',"
                " :at, :at)"), {"at": at})
        # env.py reconfigures logging (and closes pytest's capture): listen on the logger itself.
        migration_log, collected = logging.getLogger("svc_auth.migrations"), _Collect()
        migration_log.addHandler(collected)
        try:
            upgrade()
        finally:
            migration_log.removeHandler(collected)
        with db.engine.connect() as connection:
            stored = dict(connection.execute(sa.text("SELECT id, email_key FROM users")).all())
            token_email = connection.execute(sa.text(
                "SELECT email FROM one_time_tokens")).scalar_one()
        db.engine.dispose()
    assert stored == {"u-grace": "grace@example.com", "u-umlaut": "ada@bücher.de",
                      "u-puny": "ada@xn--bcher-kva.de"}
    assert token_email == "grace@example.com"  # the mailed link still works
    warning = next(message for message in collected.messages if "not merged" in message)
    assert "u-umlaut" in warning and "u-puny" in warning
