"""indexes that keep each request's reads flat as accounts grow; the support desk's search

Every list reads a page in the order of an index and stops at its end; a mail finds its
account's language by an index of the address; on PostgreSQL the address key compares byte by
byte (collation "C"), so its unique index serves a prefix search, and a trigram index (pg_trgm,
created here) serves a search for a part of the address, the name or the id.

Revision ID: 0090
Revises: 0081
Create Date: 2026-11-28 21:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0090'
down_revision = '0081'
branch_labels = None
depends_on = None

DISABLED = sa.text('disabled_at IS NOT NULL')


def upgrade():
    postgresql = op.get_bind().dialect.name == 'postgresql'
    if postgresql:
        # pg_trgm is a trusted extension: the database's owner, or a role with CREATE on it,
        # may create it (docs/operators/deployment.md).
        op.execute('CREATE EXTENSION IF NOT EXISTS pg_trgm')
        op.execute('ALTER TABLE users ALTER COLUMN email_key TYPE VARCHAR(254) COLLATE "C"')
    op.create_index('ix_users_created_at_id', 'users', ['created_at', 'id'])
    op.create_index('ix_users_plan_created_at_id', 'users', ['plan', 'created_at', 'id'])
    op.create_index('ix_users_disabled_created_at_id', 'users', ['created_at', 'id'],
                    sqlite_where=DISABLED, postgresql_where=DISABLED)
    op.create_index('ix_users_email', 'users', ['email'])
    if postgresql:
        op.execute('CREATE INDEX ix_users_search_trgm ON users USING gin '
                   '(email gin_trgm_ops, full_name gin_trgm_ops, id gin_trgm_ops)')
    op.drop_index('ix_audit_events_user_id', table_name='audit_events')
    op.create_index('ix_event_deliveries_created_at_id', 'event_deliveries', ['created_at', 'id'])
    op.create_index('ix_event_deliveries_site_created_at_id', 'event_deliveries',
                    ['site', 'created_at', 'id'])
    op.create_index('ix_event_deliveries_status_created_at_id', 'event_deliveries',
                    ['status', 'created_at', 'id'])
    op.drop_index('ix_event_deliveries_site', table_name='event_deliveries')


def downgrade():
    postgresql = op.get_bind().dialect.name == 'postgresql'
    op.create_index('ix_event_deliveries_site', 'event_deliveries', ['site'])
    op.drop_index('ix_event_deliveries_status_created_at_id', table_name='event_deliveries')
    op.drop_index('ix_event_deliveries_site_created_at_id', table_name='event_deliveries')
    op.drop_index('ix_event_deliveries_created_at_id', table_name='event_deliveries')
    op.create_index('ix_audit_events_user_id', 'audit_events', ['user_id'])
    if postgresql:
        op.drop_index('ix_users_search_trgm', table_name='users')
    op.drop_index('ix_users_email', table_name='users')
    op.drop_index('ix_users_disabled_created_at_id', table_name='users')
    op.drop_index('ix_users_plan_created_at_id', table_name='users')
    op.drop_index('ix_users_created_at_id', table_name='users')
    if postgresql:
        # The extension stays: other objects of the database may use it by now.
        op.execute('ALTER TABLE users ALTER COLUMN email_key TYPE VARCHAR(254)')
