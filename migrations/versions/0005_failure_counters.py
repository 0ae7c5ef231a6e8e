"""failure counters

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('failure_counters',
    sa.Column('scope', sa.String(length=16), nullable=False),
    sa.Column('subject', sa.String(length=64), nullable=False),
    sa.Column('source', sa.String(length=64), nullable=False),
    sa.Column('failures', sa.Integer(), nullable=False),
    sa.Column('window_start', sa.DateTime(), nullable=False),
    sa.Column('last_failure_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('scope', 'subject', 'source')
    )


def downgrade():
    op.drop_table('failure_counters')
