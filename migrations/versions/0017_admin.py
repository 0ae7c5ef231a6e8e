"""the admin API and the support console: service clients, operators, the actor of an audit
event, and the answers kept for Idempotency-Key retries

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27 05:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'service_clients',
        sa.Column('name', sa.String(length=64), primary_key=True),
        sa.Column('secret_hash', sa.String(length=64), nullable=False),
        sa.Column('scopes', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
    )
    op.create_table(
        'idempotent_answers',
        sa.Column('client_id', sa.String(length=64), primary_key=True),
        sa.Column('key', sa.String(length=255), primary_key=True),
        sa.Column('request_hash', sa.String(length=64), nullable=False),
        sa.Column('status', sa.Integer(), nullable=False),
        sa.Column('body', sa.JSON(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=False),
    )
    op.create_index('ix_idempotent_answers_created_at', 'idempotent_answers', ['created_at'])
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('operator', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    with op.batch_alter_table('audit_events') as batch:
        batch.add_column(sa.Column('actor', sa.String(length=80), nullable=True))


def downgrade():
    with op.batch_alter_table('audit_events') as batch:
        batch.drop_column('actor')
    with op.batch_alter_table('users') as batch:
        batch.drop_column('operator')
    op.drop_index('ix_idempotent_answers_created_at', table_name='idempotent_answers')
    op.drop_table('idempotent_answers')
    op.drop_table('service_clients')
