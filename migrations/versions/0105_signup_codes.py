"""signup codes: the code that proves an address before a passkey-first account takes it

Revision ID: 0105
Revises: 0090
Create Date: 2026-11-29 00:00:00.000000

"""
from alembic import op
import sqlalchemy as sa

from app.models.types import UTCDateTime


# revision identifiers, used by Alembic.
revision = '0105'
down_revision = '0090'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'signup_codes',
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('code_hash', sa.String(length=64), nullable=False),
        sa.Column('created_at', UTCDateTime(), nullable=False),
        sa.Column('expires_at', UTCDateTime(), nullable=False),
        sa.Column('failures', sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint('email_key'),
    )
    op.create_index('ix_signup_codes_expires_at', 'signup_codes', ['expires_at'])


def downgrade():
    op.drop_index('ix_signup_codes_expires_at', table_name='signup_codes')
    op.drop_table('signup_codes')
