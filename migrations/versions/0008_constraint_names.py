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
convention), and this migration changes nothing there. The downgrade gives the names that a
database of before had: PostgreSQL's own, or none on SQLite.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

# The tables of revision 0007. The names are spelt out here, not taken from the app's
# convention: a later change to that needs a migration of its own.
TABLES = ('audit_events', 'users', 'sessions', 'refresh_tokens', 'client_sites',
          'handoff_codes', 'identities', 'one_time_tokens', 'failure_counters',
          'rate_limit_counters', 'mail_jobs')


def upgrade():
    for table in TABLES:
        _name(table, {constraint: conventional
                      for constraint, conventional, _ in _constraints(table)})


def downgrade():
    sqlite = op.get_bind().dialect.name == 'sqlite'
    for table in TABLES:
        _name(table, {constraint: None if sqlite else server_default
                      for constraint, _, server_default in _constraints(table)})


def _constraints(table):
    """Each constraint of the table as reflected, with the convention's name for it and the name
    PostgreSQL gives one created without a name."""
    reflected = sa.Table(table, sa.MetaData(), autoload_with=op.get_bind())
    for constraint in reflected.constraints:
        names = [column.name for column in constraint.columns]
        columns = '_'.join(names)
        if isinstance(constraint, sa.PrimaryKeyConstraint):
            yield constraint, f'pk_{table}', f'{table}_pkey'
        elif isinstance(constraint, sa.ForeignKeyConstraint):
            yield (constraint, f'fk_{table}_{names[0]}_{constraint.referred_table.name}',
                   f'{table}_{columns}_fkey')
        elif isinstance(constraint, sa.UniqueConstraint):
            yield constraint, f'uq_{table}_{columns}', f'{table}_{columns}_key'


def _name(table, new_names):
    """Give each constraint its new name: in place on PostgreSQL (a primary key or unique
    constraint takes its index along); on SQLite, which cannot rename one, by rebuilding the
    table with its rows, its indexes and the constraints so named (None: unnamed)."""
    changed = {constraint: name for constraint, name in new_names.items()
               if constraint.name != name}
    if not changed:
        return
    if op.get_bind().dialect.name != 'sqlite':
        for constraint, name in changed.items():
            op.execute(f'ALTER TABLE {table} RENAME CONSTRAINT {constraint.name} TO {name}')
        return
    for constraint, name in changed.items():
        constraint.name = name
    reflected = next(iter(changed)).table
    with op.batch_alter_table(table, recreate='always', copy_from=reflected):
        pass
