"""pushed authorization requests: the address a public client's push came from, and the indexes
that count the live ones per client and per address (their caps)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27 09:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('pushed_requests') as batch:
        batch.add_column(sa.Column('address', sa.String(length=64), nullable=True))
    op.create_index('ix_pushed_requests_client_id', 'pushed_requests', ['client_id'],
                    unique=False)
    op.create_index('ix_pushed_requests_address', 'pushed_requests', ['address'], unique=False)


def downgrade():
    op.drop_index('ix_pushed_requests_address', table_name='pushed_requests')
    op.drop_index('ix_pushed_requests_client_id', table_name='pushed_requests')
    with op.batch_alter_table('pushed_requests') as batch:
        batch.drop_column('address')
