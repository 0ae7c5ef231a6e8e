"""second factors: authenticator apps, recovery codes, pending sign-ins; the factor of a
session and a handoff code

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23 20:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    for table in ('sessions', 'handoff_codes'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('second_factor', sa.String(length=16), nullable=True))
    op.create_table('totp_factors',
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('secret', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('confirmed_at', sa.DateTime(), nullable=True),
    sa.Column('last_used_step', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE',
                            name='fk_totp_factors_user_id_users'),
    sa.PrimaryKeyConstraint('user_id', name='pk_totp_factors')
    )
    op.create_table('recovery_codes',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('used_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE',
                            name='fk_recovery_codes_user_id_users'),
    sa.PrimaryKeyConstraint('id', name='pk_recovery_codes')
    )
    op.create_index('ix_recovery_codes_user_id', 'recovery_codes', ['user_id'], unique=False)
    op.create_table('pending_sign_ins',
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('purpose', sa.String(length=16), nullable=False),
    sa.Column('provider', sa.String(length=32), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('used_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE',
                            name='fk_pending_sign_ins_user_id_users'),
    sa.PrimaryKeyConstraint('token_hash', name='pk_pending_sign_ins')
    )


def downgrade():
    op.drop_table('pending_sign_ins')
    op.drop_index('ix_recovery_codes_user_id', table_name='recovery_codes')
    op.drop_table('recovery_codes')
    op.drop_table('totp_factors')
    for table in ('handoff_codes', 'sessions'):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('second_factor')
