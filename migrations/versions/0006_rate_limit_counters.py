"""rate-limit counters, counted in the database while Redis fails

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 16:15:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('rate_limit_counters',
    sa.Column('key', sa.String(length=64), nullable=False),
    sa.Column('hits', sa.Integer(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )


def downgrade():
    op.drop_table('rate_limit_counters')
