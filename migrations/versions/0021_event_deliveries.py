"""events to client sites: webhook endpoints and secrets, back-channel logout URIs, and the
deliveries the outbox's worker makes

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-27 07:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('client_sites') as batch:
        batch.add_column(sa.Column('webhook_url', sa.String(length=2048), nullable=True))
        batch.add_column(sa.Column('webhook_secret_sealed', sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column('webhook_previous_sealed', sa.LargeBinary(), nullable=True))
        batch.add_column(sa.Column('webhook_previous_until', sa.DateTime(), nullable=True))
        batch.add_column(sa.Column('backchannel_logout_uri', sa.String(length=2048),
                                   nullable=True))
    op.create_table(
        'event_deliveries',
        sa.Column('id', sa.String(length=36), primary_key=True),
        sa.Column('kind', sa.String(length=32), nullable=False),
        sa.Column('event_id', sa.String(length=40), nullable=False),
        sa.Column('site', sa.String(length=64), nullable=False),
        sa.Column('sid', sa.String(length=36), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', sa.DateTime(), nullable=False),
        sa.Column('claimed_by', sa.String(length=64), nullable=True),
        sa.Column('claimed_until', sa.DateTime(), nullable=True),
        sa.Column('last_error', sa.String(length=64), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('finished_at', sa.DateTime(), nullable=True),
        sa.UniqueConstraint('event_id', 'site', 'kind', 'sid'),
    )
    op.create_index('ix_event_deliveries_event_id', 'event_deliveries', ['event_id'])
    op.create_index('ix_event_deliveries_site', 'event_deliveries', ['site'])
    op.create_index('ix_event_deliveries_finished_at', 'event_deliveries', ['finished_at'])
    op.create_index('ix_event_deliveries_status_next_attempt', 'event_deliveries',
                    ['status', 'next_attempt_at'])


def downgrade():
    op.drop_index('ix_event_deliveries_status_next_attempt', table_name='event_deliveries')
    op.drop_index('ix_event_deliveries_finished_at', table_name='event_deliveries')
    op.drop_index('ix_event_deliveries_site', table_name='event_deliveries')
    op.drop_index('ix_event_deliveries_event_id', table_name='event_deliveries')
    op.drop_table('event_deliveries')
    with op.batch_alter_table('client_sites') as batch:
        batch.drop_column('backchannel_logout_uri')
        batch.drop_column('webhook_previous_until')
        batch.drop_column('webhook_previous_sealed')
        batch.drop_column('webhook_secret_sealed')
        batch.drop_column('webhook_url')
