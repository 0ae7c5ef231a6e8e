"""pushed authorization requests (RFC 9126)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-25 17:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('pushed_requests',
    sa.Column('handle_hash', sa.String(length=64), nullable=False),
    sa.Column('client_id', sa.String(length=64), nullable=False),
    sa.Column('params', sa.Text(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('used_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('handle_hash', name='pk_pushed_requests')
    )
    op.create_index('ix_pushed_requests_expires_at', 'pushed_requests', ['expires_at'],
                    unique=False)


def downgrade():
    op.drop_index('ix_pushed_requests_expires_at', table_name='pushed_requests')
    op.drop_table('pushed_requests')
