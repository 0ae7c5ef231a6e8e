"""an index for the undo links that hold a moved-from address, asked at every sign-up

Revision ID: 0030
Revises: 0023
Create Date: 2026-11-28 21:00:00.000000

"""
from alembic import op


# revision identifiers, used by Alembic.
revision = '0030'
down_revision = '0023'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_one_time_tokens_purpose_email', 'one_time_tokens', ['purpose', 'email'])


def downgrade():
    op.drop_index('ix_one_time_tokens_purpose_email', table_name='one_time_tokens')
