"""The Alembic migrations build the schema the models describe, on an empty database."""

import logging
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from flask_migrate import downgrade, upgrade

from app import create_app
from app.extensions import db


def test_upgrade_builds_exactly_the_models_schema_and_downgrade_removes_it(tmp_path,
                                                                         empty_database_url):
    """On SQLite, and on PostgreSQL when the suite runs there."""
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url})
    with app.app_context():
        upgrade()
        with db.engine.connect() as connection:
            diff = compare_metadata(MigrationContext.configure(
                connection, opts={"include_object": _made_on(connection.dialect)}), db.metadata)
        assert diff == []
        with db.engine.connect() as connection:
            assert _names_in(connection) == _names_in_models(connection.dialect)
        downgrade(revision="base")
        with db.engine.connect() as connection:
            tables = set(db.inspect(connection).get_table_names())
        assert tables <= {"alembic_version"}
        db.engine.dispose()


# (kind, table, columns, name) of each constraint and index. SQLite reports a constraint's name
# only when its CREATE TABLE gave one: there, equal names prove the tables were built named.
Named = tuple[str, str, tuple[str, ...], str | None]


def _names_in(connection: sa.Connection) -> set[Named]:
    inspector = sa.inspect(connection)
    found: set[Named] = set()
    for table in set(inspector.get_table_names()) - {"alembic_version"}:
        key = inspector.get_pk_constraint(table)
        found.add(("pk", table, tuple(key["constrained_columns"]), key["name"]))
        found |= {("fk", table, tuple(fk["constrained_columns"]), fk["name"])
                  for fk in inspector.get_foreign_keys(table)}
        found |= {("uq", table, tuple(uq["column_names"]), uq["name"])
                  for uq in inspector.get_unique_constraints(table)}
        found |= {("ck", table, (), ck["name"]) for ck in inspector.get_check_constraints(table)}
        found |= {("ix", table, tuple(ix["column_names"]), ix["name"])
                  for ix in inspector.get_indexes(table)
                  if "duplicates_constraint" not in ix}  # PostgreSQL: a unique constraint's
    return found


def _names_in_models(dialect: sa.Dialect) -> set[Named]:
    """The names the models give, by the naming convention or explicitly."""
    kinds = {sa.PrimaryKeyConstraint: "pk", sa.ForeignKeyConstraint: "fk",
             sa.UniqueConstraint: "uq", sa.CheckConstraint: "ck"}
    name = dialect.identifier_preparer.format_constraint
    found: set[Named] = set()
    for table in db.metadata.tables.values():
        for constraint in table.constraints:
            kind = kinds[type(constraint)]
            columns = () if kind == "ck" else tuple(c.name for c in constraint.columns)
            found.add((kind, table.name, columns, name(constraint)))
        found |= {("ix", table.name, tuple(c.name for c in index.columns), name(index))
                  for index in table.indexes if _made_on(dialect)(index, "", "index", False, None)}
    return found


def _made_on(dialect: sa.Dialect) -> Any:
    """Alembic's include_object: what the models make on `dialect`. A GIN index (pg_trgm's
    search) is made on PostgreSQL only."""
    def made(item: Any, _name: str | None, kind: str, _reflected: bool, _other: Any) -> bool:
        return not (kind == "index" and dialect.name != "postgresql"
                    and item.dialect_options["postgresql"]["using"] == "gin")
    return made


def test_constraints_are_named_by_the_convention_and_every_row_kept(tmp_path, empty_database_url,
                                                                    monkeypatch):
    """Migration 0008 (issue 14): the constraints of a database built before the convention
    take its names, with its rows in it; its downgrade gives back the names of before."""
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url})
    with app.app_context():
        with monkeypatch.context() as before_the_convention:
            # Alembic's operations name what they create by the models' convention: without
            # it, 0001-0007 build what they built before it (PostgreSQL's names, or none).
            before_the_convention.setattr(db.metadata, "naming_convention",
                                          sa.MetaData().naming_convention)
            upgrade(revision="0007")
        with db.engine.begin() as connection:
            before = _names_in(connection)
            for table, row in _ONE_ROW_EACH.items():
                connection.execute(sa.table(table, *(sa.column(k, _type(v)) for k, v in
                                                     row.items())).insert(), row)
            rows = _rows(connection)
        upgrade()
        with db.engine.connect() as connection:
            assert _names_in(connection) == _names_in_models(connection.dialect)
            assert _columns_of(_rows(connection), rows) == rows
        downgrade(revision="0007")
        with db.engine.connect() as connection:
            assert _names_in(connection) == before
            assert _rows(connection) == rows
        upgrade()
        with db.engine.connect() as connection:
            assert _columns_of(_rows(connection), rows) == rows
            # The foreign keys still hold, and still cascade.
            connection.execute(sa.text("DELETE FROM users"))
            assert connection.execute(sa.text("SELECT count(*) FROM refresh_tokens")).scalar() == 0
        db.engine.dispose()


_AT = datetime(2026, 1, 1, 12, 0, 0)
_ONE_ROW_EACH: dict[str, dict[str, Any]] = {
    "users": {"id": "u-1", "email": "ada@example.com", "email_key": "ada@example.com",
              "full_name": "Ada", "password_hash": "h", "plan": "free", "email_verified": True,
              "email_verified_at": _AT, "created_at": _AT},
    "sessions": {"id": "s-1", "user_id": "u-1", "provider": "password", "created_at": _AT,
                 "last_used_at": _AT, "expires_at": _AT},
    "refresh_tokens": {"id": 7, "session_id": "s-1", "token_hash": "r" * 64, "created_at": _AT,
                       "expires_at": _AT, "successor_sealed": b"\x00sealed"},
    "identities": {"id": 3, "user_id": "u-1", "provider": "github", "subject": "42",
                   "email": "ada@example.com", "created_at": _AT},
    "one_time_tokens": {"token_hash": "t" * 64, "user_id": "u-1", "purpose": "reset_password",
                        "email": "ada@example.com", "created_at": _AT, "expires_at": _AT},
    "handoff_codes": {"code_hash": "c" * 64, "user_id": "u-1", "provider": "password",
                      "redirect_uri": "https://site.example/back", "created_at": _AT,
                      "expires_at": _AT, "session_id": "s-1"},
    "audit_events": {"id": 5, "at": _AT, "event": "login", "user_id": "u-1", "ip": "192.0.2.1"},
    "client_sites": {"name": "site", "redirect_uris": ["https://site.example/back"],
                     "origins": ["https://site.example"], "created_at": _AT},
    "failure_counters": {"scope": "login", "subject": "s", "source": "*", "failures": 2,
                         "window_start": _AT, "last_failure_at": _AT},
    "rate_limit_counters": {"key": "k", "hits": 3, "expires_at": _AT},
    "mail_jobs": {"id": "m-1", "kind": "reset_password", "payload": {"user_id": "u-1"},
                  "status": "pending", "attempts": 0, "next_attempt_at": _AT, "created_at": _AT},
}


def _type(value: Any) -> sa.types.TypeEngine[Any] | None:
    for python_type, column_type in ((bool, sa.Boolean), (datetime, sa.DateTime),
                                     (bytes, sa.LargeBinary), (dict, sa.JSON), (list, sa.JSON)):
        if isinstance(value, python_type):
            return column_type()
    return None


def _rows(connection: sa.Connection) -> dict[str, list[Any]]:
    return {table: [dict(row._mapping) for row in connection.execute(sa.text(
                f"SELECT * FROM {table} ORDER BY 1"))]  # noqa: S608 (our own table names)
            for table in _ONE_ROW_EACH}


def _columns_of(rows: dict[str, list[Any]], before: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """`rows` without the columns later migrations added (0009: a client's columns)."""
    return {table: [{k: v for k, v in row.items() if k in before[table][0]} for row in found]
            for table, found in rows.items()}


def test_a_site_registered_before_0009_is_a_first_party_public_client(tmp_path, empty_database_url):
    """Migration 0009 (issue 15): the client columns of a site added before have the defaults
    of a first-party public client, and nothing else changes."""
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url})
    with app.app_context():
        upgrade(revision="0008")
        with db.engine.begin() as connection:
            site = _ONE_ROW_EACH["client_sites"]
            connection.execute(sa.table("client_sites", *(sa.column(k, _type(v))
                                                          for k, v in site.items())).insert(), site)
        upgrade()
        with db.engine.connect() as connection:
            row = connection.execute(sa.text(
                "SELECT token_endpoint_auth_method, first_party, client_secret_hash, scopes,"
                " post_logout_redirect_uris FROM client_sites")).one()
        db.engine.dispose()
    assert tuple(row) == ("none", True, None, None, None)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_addresses_are_canonicalised_and_collisions_reported_not_merged(tmp_path,
                                                                       empty_database_url):
    """Migration 0004 (issue 12, item 2): every address is re-keyed to its canonical form, and
    two rows that would share one are left as they were and named in the log."""
    from datetime import UTC, datetime

    import sqlalchemy as sa

    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url})
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


def test_0012_trusts_only_passwords_a_reset_link_set(tmp_path, empty_database_url):
    """Migration 0012: a password set by a reset link (its audit event) is the holder's; one
    set at sign-up, or changed since the reset (a squatter's change after the owner confirmed
    the address, which the rule before trusted), or of an unproved address, is not."""
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url})
    signed_up, proved, later = datetime(2026, 1, 1), datetime(2026, 2, 1), datetime(2026, 3, 1)
    accounts = {  # id: (email_verified, password_hash, password_changed_at, reset at)
        "reset": (True, "h", later, later),
        "changed-after-its-reset": (True, "h", later, proved),
        "squatter-changed-after-confirmation": (True, "h", later, None),
        "signed-up-and-confirmed": (True, "h", signed_up, None),
        "never-proved": (False, "h", later, later),
        "no-password": (True, None, None, None),
    }
    with app.app_context():
        upgrade(revision="0011")
        with db.engine.begin() as connection:
            for user_id, (verified, password, changed, reset_at) in accounts.items():
                connection.execute(sa.text(
                    "INSERT INTO users (id, email, email_key, full_name, password_hash, plan,"
                    " email_verified, email_verified_at, created_at, password_changed_at)"
                    " VALUES (:id, :id, :id, '', :password, 'free', :verified, :verified_at,"
                    " :created, :changed)"),
                    {"id": user_id, "password": password, "verified": verified,
                     "verified_at": proved if verified else None, "created": signed_up,
                     "changed": changed})
                if reset_at is not None:
                    connection.execute(sa.text(
                        "INSERT INTO audit_events (at, event, user_id) VALUES (:at, "
                        "'password_reset', :id)"), {"at": reset_at, "id": user_id})
        upgrade()
        with db.engine.connect() as connection:
            rows = dict(connection.execute(sa.text(
                "SELECT id, password_proved_at FROM users")).all())
        db.engine.dispose()
    assert {user_id for user_id, at in rows.items() if at is not None} == {"reset"}
