"""users.password_proved_at: when the password in force was shown to be the address holder's

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-25 15:30:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('password_proved_at', sa.DateTime(), nullable=True))
    # What the rule before it judged the holder's: a password set after the address was proved.
    op.execute("UPDATE users SET password_proved_at = password_changed_at "
               "WHERE password_hash IS NOT NULL AND email_verified "
               "AND email_verified_at IS NOT NULL AND password_changed_at >= email_verified_at")


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('password_proved_at')
