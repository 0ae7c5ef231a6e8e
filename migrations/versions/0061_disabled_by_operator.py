"""whether an operator disabled an account, apart from its owner's leaving: an operator's disable
holds through the owner's restore link

Revision ID: 0061
Revises: 0060
Create Date: 2026-11-28 21:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0061'
down_revision = '0060'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('disabled_by_operator', sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
    # Before, an account disabled when its owner left had disabled_at equal to
    # deletion_scheduled_at; any other disabled account was an operator's doing.
    users = sa.table('users', sa.column('disabled_at'), sa.column('deletion_scheduled_at'),
                     sa.column('disabled_by_operator', sa.Boolean()))
    op.execute(users.update()
               .where(users.c.disabled_at.is_not(None),
                      sa.or_(users.c.deletion_scheduled_at.is_(None),
                             users.c.disabled_at != users.c.deletion_scheduled_at))
               .values(disabled_by_operator=True))


def downgrade():
    with op.batch_alter_table('users') as batch:
        batch.drop_column('disabled_by_operator')
