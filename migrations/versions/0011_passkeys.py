"""passkeys (WebAuthn credentials) and the challenges of their ceremonies

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 15:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('passkeys',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('credential_key', sa.String(length=64), nullable=False),
    sa.Column('credential_id', sa.LargeBinary(), nullable=False),
    sa.Column('public_key', sa.LargeBinary(), nullable=False),
    sa.Column('sign_count', sa.BigInteger(), nullable=False),
    sa.Column('transports', sa.String(length=200), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('backup_eligible', sa.Boolean(), nullable=False),
    sa.Column('backed_up', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('last_used_at', sa.DateTime(), nullable=True),
    sa.Column('signs_in_alone', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE',
                            name='fk_passkeys_user_id_users'),
    sa.PrimaryKeyConstraint('id', name='pk_passkeys'),
    sa.UniqueConstraint('credential_key', name='uq_passkeys_credential_key')
    )
    op.create_index('ix_passkeys_user_id', 'passkeys', ['user_id'], unique=False)
    op.create_table('passkey_challenges',
    sa.Column('challenge_hash', sa.String(length=64), nullable=False),
    sa.Column('purpose', sa.String(length=16), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=True),
    sa.Column('pending_hash', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('used_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE',
                            name='fk_passkey_challenges_user_id_users'),
    sa.PrimaryKeyConstraint('challenge_hash', name='pk_passkey_challenges')
    )


def downgrade():
    op.drop_table('passkey_challenges')
    op.drop_index('ix_passkeys_user_id', table_name='passkeys')
    op.drop_table('passkeys')
