"""constraint names: every primary key, foreign key and unique constraint named by the convention

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 18:30:00.000000

The models had no names for their constraints: PostgreSQL named them itself (`users_pkey`,
`users_email_key_key`, `sessions_user_id_fkey`) and SQLite left them anonymous. The models now
name them by the convention of app/extensions.py (`pk_users`, `uq_users_email_key`,
`fk_sessions_user_id_users`), and this migration gives those names to a database built before.
PostgreSQL renames a constraint in place. SQLite cannot: a table with an anonymous constraint is
rebuilt with named ones and its rows copied (migrations/env.py turns foreign keys off for that,
as SQLite's procedure asks). Indexes had their names already; there is no CHECK constraint.

A database built since then has the names from 0001 on (Alembic's operations follow the models'
convention), and this migration changes nothing there. The downgrade gives back the names of
before: PostgreSQL's own, or none on SQLite.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

# The tables of revision 0007, and the convention as it was when this migration was written: a
# later change to the app's convention needs a migration of its own.
TABLES = ('audit_events', 'users', 'sessions', 'refresh_tokens', 'client_sites',
          'handoff_codes', 'identities', 'one_time_tokens', 'failure_counters',
          'rate_limit_counters', 'mail_jobs')
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def upgrade():
    sqlite = op.get_bind().dialect.name == 'sqlite'
    for table in TABLES:
        names = _names(table)
        if sqlite and any(name is None for name, _, _ in names):
            # Reflected anonymous, given the convention's names in the rebuilt table.
            with op.batch_alter_table(table, recreate='always',
                                      naming_convention=NAMING_CONVENTION):
                pass
        elif not sqlite:
            for name, conventional, _ in names:
                _rename(table, name, conventional)


def downgrade():
    sqlite = op.get_bind().dialect.name == 'sqlite'
    for table in TABLES:
        names = _names(table)
        if sqlite and any(name is not None for name, _, _ in names):
            with op.batch_alter_table(table, recreate='always', copy_from=_anonymous(table)):
                pass
        elif not sqlite:
            for name, _, server_default in names:
                _rename(table, name, server_default)


def _names(table):
    """(its name now, the convention's name, the name PostgreSQL gives an unnamed one) of each
    constraint of the table."""
    inspector = sa.inspect(op.get_bind())
    names = [(inspector.get_pk_constraint(table)['name'], f'pk_{table}', f'{table}_pkey')]
    for key in inspector.get_foreign_keys(table):
        column = key['constrained_columns'][0]
        names.append((key['name'], f'fk_{table}_{column}_{key["referred_table"]}',
                      f'{table}_{column}_fkey'))
    for unique in inspector.get_unique_constraints(table):
        columns = '_'.join(unique['column_names'])
        names.append((unique['name'], f'uq_{table}_{columns}', f'{table}_{columns}_key'))
    return names


def _rename(table, old, new):
    # A primary key or unique constraint takes its index with it to the new name.
    if old != new:
        op.execute(f'ALTER TABLE {table} RENAME CONSTRAINT {old} TO {new}')


def _anonymous(table):
    """The table as it is, with its constraints unnamed again (indexes keep their names)."""
    reflected = sa.Table(table, sa.MetaData(), autoload_with=op.get_bind())
    for constraint in reflected.constraints:
        constraint.name = None
    return reflected
