"""events say what each receiver may know, in a per-account order: each account event's
sequence number (and the counter it is taken from), each webhook delivery's data as its site
may be told it

Revision ID: 0040
Revises: 0030
Create Date: 2026-11-28 21:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0040'
down_revision = '0030'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('account_events') as batch:
        batch.add_column(sa.Column('sequence', sa.BigInteger(), nullable=True))
    # The events kept so far are numbered in the order they happened.
    op.execute(
        "UPDATE account_events SET sequence = (SELECT COUNT(*) FROM account_events AS earlier"
        " WHERE earlier.user_id = account_events.user_id"
        " AND (earlier.occurred_at < account_events.occurred_at"
        " OR (earlier.occurred_at = account_events.occurred_at"
        " AND earlier.id <= account_events.id)))")
    with op.batch_alter_table('account_events') as batch:
        batch.create_unique_constraint('uq_account_events_user_id_sequence',
                                       ['user_id', 'sequence'])
    op.create_table(
        'account_event_sequences',
        sa.Column('user_id', sa.String(length=36), nullable=False),
        sa.Column('last_sequence', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('user_id', name='pk_account_event_sequences'),
    )
    op.execute("INSERT INTO account_event_sequences (user_id, last_sequence)"
               " SELECT user_id, MAX(sequence) FROM account_events GROUP BY user_id")
    with op.batch_alter_table('event_deliveries') as batch:
        batch.add_column(sa.Column('data', sa.JSON(none_as_null=True), nullable=True))


def downgrade():
    with op.batch_alter_table('event_deliveries') as batch:
        batch.drop_column('data')
    op.drop_table('account_event_sequences')
    with op.batch_alter_table('account_events') as batch:
        batch.drop_constraint('uq_account_events_user_id_sequence', type_='unique')
        batch.drop_column('sequence')
