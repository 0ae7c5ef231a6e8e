"""audit events: the operator's address, reads marked as such, before and after values

Revision ID: 0050
Revises: 0041
Create Date: 2026-11-28 21:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0050'
down_revision = '0041'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('audit_events') as batch:
        batch.add_column(sa.Column('actor_email', sa.String(length=320), nullable=True))
        batch.add_column(sa.Column('read', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        batch.add_column(sa.Column('changes', sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table('audit_events') as batch:
        batch.drop_column('changes')
        batch.drop_column('read')
        batch.drop_column('actor_email')
