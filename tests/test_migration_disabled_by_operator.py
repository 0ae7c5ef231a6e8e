"""The migration that adds `users.disabled_by_operator` (issue 33, finding 8) marks the accounts
an operator disabled before it: every disabled account but one disabled only by its owner's
leaving (then `disabled_at` equals `deletion_scheduled_at`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic.script import ScriptDirectory
from flask_migrate import upgrade

from app import create_app
from app.extensions import db


def _revision():
    """The migration's revision and the one before it, whatever numbers the chain gives."""
    scripts = ScriptDirectory("migrations")
    found = next(s for s in scripts.walk_revisions()
                 if s.path.endswith("_disabled_by_operator.py"))
    return found.revision, found.down_revision


def _filler(column: sa.Column, index: int) -> object:
    kind = column.type
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.Integer):
        return 0
    if isinstance(kind, sa.DateTime):
        return datetime(2026, 1, 1, tzinfo=UTC)
    if isinstance(kind, sa.JSON):
        return {}
    return f"{column.name}-{index}"[: getattr(kind, "length", None) or 64]


def test_accounts_disabled_by_an_operator_before_it_are_marked(tmp_path, empty_database_url):
    revision, before = _revision()
    app = create_app({"INSTANCE_PATH": str(tmp_path), "SECRET_KEY": "t",
                      "SQLALCHEMY_DATABASE_URI": empty_database_url})
    left = datetime(2026, 11, 1, tzinfo=UTC)
    rows = {"active": (None, None), "operator": (left - timedelta(days=3), None),
            "leaving": (left, left), "both": (left - timedelta(days=3), left)}
    with app.app_context():
        upgrade(revision=before)
        users = sa.Table("users", sa.MetaData(), autoload_with=db.engine)
        with db.engine.begin() as connection:
            for index, (name, (disabled_at, scheduled_at)) in enumerate(rows.items()):
                values = {c.name: _filler(c, index) for c in users.columns
                          if not c.nullable and c.server_default is None}
                connection.execute(users.insert().values(
                    values | {"id": name, "disabled_at": disabled_at,
                              "deletion_scheduled_at": scheduled_at}))
        upgrade(revision=revision)
        with db.engine.connect() as connection:
            marked = dict(connection.execute(sa.text(
                "SELECT id, disabled_by_operator FROM users")).all())
        db.engine.dispose()
    assert {name: bool(flag) for name, flag in marked.items()} == {
        "active": False, "operator": True, "leaving": False, "both": True}
