"""The Alembic migrations build the schema the models describe, on an empty database."""

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
