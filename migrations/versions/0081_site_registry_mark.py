"""a mark that changes with every change of a registered site, so that each worker keeps the
sites' CORS origins and knows at once when its copy is stale

Revision ID: 0081
Revises: 0080
Create Date: 2026-11-28 21:20:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0081'
down_revision = '0080'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'site_registry_mark',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('mark', sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )


def downgrade():
    op.drop_table('site_registry_mark')
