"""email sign-in codes and links: one live code per address and purpose, stored as hashes;
a site may turn them off

Revision ID: 0100
Revises: 0090
Create Date: 2026-11-28 23:55:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0100'
down_revision = '0090'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'email_codes',
        sa.Column('email_key', sa.String(length=254), nullable=False),
        sa.Column('purpose', sa.String(length=32), nullable=False),
        sa.Column('code_hash', sa.String(length=64), nullable=False),
        sa.Column('link_hash', sa.String(length=64), nullable=False),
        sa.Column('browser_hash', sa.String(length=64), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('created_at', sa.DateTime(), nullable=False),
        sa.Column('expires_at', sa.DateTime(), nullable=False),
        sa.Column('used_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('email_key', 'purpose', name='pk_email_codes'),
        sa.UniqueConstraint('link_hash', name='uq_email_codes_link_hash'),
    )
    op.create_index('ix_email_codes_expires_at', 'email_codes', ['expires_at'])
    with op.batch_alter_table('client_sites') as batch:
        batch.add_column(sa.Column('email_code_sign_in', sa.Boolean(), nullable=False,
                                   server_default=sa.true()))


def downgrade():
    with op.batch_alter_table('client_sites') as batch:
        batch.drop_column('email_code_sign_in')
    op.drop_index('ix_email_codes_expires_at', table_name='email_codes')
    op.drop_table('email_codes')
