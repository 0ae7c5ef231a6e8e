"""an account's audit events are listed newest first by their time, then their id

Revision ID: 0041
Revises: 0040
Create Date: 2026-11-28 21:20:00.000000

"""
from alembic import op


# revision identifiers, used by Alembic.
revision = '0041'
down_revision = '0040'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_audit_events_user_id_at_id', 'audit_events', ['user_id', 'at', 'id'])


def downgrade():
    op.drop_index('ix_audit_events_user_id_at_id', table_name='audit_events')
