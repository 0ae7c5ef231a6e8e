"""the language an account chose on a page, for its pages and its mails

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-28 07:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('language', sa.String(length=16), nullable=True))


def downgrade():
    with op.batch_alter_table('users') as batch:
        batch.drop_column('language')
