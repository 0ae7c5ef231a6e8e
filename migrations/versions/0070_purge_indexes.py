"""an index for each predicate of `flask purge`, and when an account was erased (once)

Revision ID: 0070
Revises: 0061
Create Date: 2026-11-28 21:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0070'
down_revision = '0061'
branch_labels = None
depends_on = None

INDEXES = (
    ('sessions', 'expires_at'),
    ('sessions', 'revoked_at'),
    ('failure_counters', 'window_start'),
    ('rate_limit_counters', 'expires_at'),
    ('one_time_tokens', 'expires_at'),
    ('pending_sign_ins', 'expires_at'),
    ('passkey_challenges', 'expires_at'),
)


def upgrade():
    with op.batch_alter_table('users') as batch:
        batch.add_column(sa.Column('erased_at', sa.DateTime(), nullable=True))
    # Accounts erased before this revision: their address was replaced by the erasure.
    op.execute("UPDATE users SET erased_at = deletion_scheduled_at"
               " WHERE email LIKE '%@erased.invalid'")
    op.create_index('ix_users_erasure_due', 'users', ['erased_at', 'deletion_scheduled_at'])
    for table, column in INDEXES:
        op.create_index(f'ix_{table}_{column}', table, [column])


def downgrade():
    for table, column in INDEXES:
        op.drop_index(f'ix_{table}_{column}', table_name=table)
    op.drop_index('ix_users_erasure_due', table_name='users')
    with op.batch_alter_table('users') as batch:
        batch.drop_column('erased_at')
