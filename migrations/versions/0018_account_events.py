"""account events for the client sites, written with the change they report

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-27 06:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'account_events',
        sa.Column('id', sa.String(length=40), primary_key=True),
        sa.Column('type', sa.String(length=40), nullable=False),
        sa.Column('user_id', sa.String(length=36), nullable=False),
        sa.Column('occurred_at', sa.DateTime(), nullable=False),
        sa.Column('data', sa.JSON(), nullable=False),
        sa.Column('dispatched_at', sa.DateTime(), nullable=True),
    )
    op.create_index('ix_account_events_user_id', 'account_events', ['user_id'])
    op.create_index('ix_account_events_occurred_at', 'account_events', ['occurred_at'])
    op.create_index('ix_account_events_dispatched_at', 'account_events', ['dispatched_at'])


def downgrade():
    op.drop_index('ix_account_events_dispatched_at', table_name='account_events')
    op.drop_index('ix_account_events_occurred_at', table_name='account_events')
    op.drop_index('ix_account_events_user_id', table_name='account_events')
    op.drop_table('account_events')
