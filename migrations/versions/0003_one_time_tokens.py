"""one-time tokens

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-21 23:58:45.526680

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('one_time_tokens',
    sa.Column('token_hash', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('purpose', sa.String(length=32), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('used_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('token_hash')
    )
    with op.batch_alter_table('one_time_tokens', schema=None) as batch_op:
        batch_op.create_index('ix_one_time_tokens_user_purpose', ['user_id', 'purpose'], unique=False)



def downgrade():
    with op.batch_alter_table('one_time_tokens', schema=None) as batch_op:
        batch_op.drop_index('ix_one_time_tokens_user_purpose')

    op.drop_table('one_time_tokens')
