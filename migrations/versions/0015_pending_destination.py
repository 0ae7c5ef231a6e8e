"""pending_sign_ins keeps where its sign-in goes once the second step is done (it was split
between the row and the browser's cookie)

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27 00:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade():
    # A pending sign-in lives minutes: one left from before has no destination, and is refused.
    with op.batch_alter_table('pending_sign_ins', schema=None) as batch_op:
        batch_op.add_column(sa.Column('destination', sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column('redirect_uri', sa.String(length=2048), nullable=True))
        batch_op.add_column(sa.Column('code_challenge', sa.String(length=128), nullable=True))
        batch_op.add_column(sa.Column('client_state', sa.String(length=512), nullable=True))


def downgrade():
    with op.batch_alter_table('pending_sign_ins', schema=None) as batch_op:
        batch_op.drop_column('client_state')
        batch_op.drop_column('code_challenge')
        batch_op.drop_column('redirect_uri')
        batch_op.drop_column('destination')
