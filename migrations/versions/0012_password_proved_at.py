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
    # Only a password set by a reset link (its audit event at or after the password's change)
    # is known to be the address holder's. "Set after the address was proved", the rule before,
    # also trusted a squatter's change made after the owner confirmed. Everyone else shows it
    # again from the account page (a confirmation link opened in the signed-in browser).
    op.execute("UPDATE users SET password_proved_at = password_changed_at "
               "WHERE password_hash IS NOT NULL AND email_verified "
               "AND password_changed_at IS NOT NULL AND EXISTS ("
               "SELECT 1 FROM audit_events WHERE audit_events.user_id = users.id "
               "AND audit_events.event = 'password_reset' "
               "AND audit_events.at >= users.password_changed_at)")


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('password_proved_at')
