"""the site a session was opened for through the handoff, for the account's device list

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-27 09:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('sessions') as batch:
        batch.add_column(sa.Column('site', sa.String(length=64), nullable=True))


def downgrade():
    with op.batch_alter_table('sessions') as batch:
        batch.drop_column('site')
