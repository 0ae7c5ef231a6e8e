"""a service client's registration, carried by its tokens: a removed client's tokens stay dead
when another is added under its name

Revision ID: 0060
Revises: 0050
Create Date: 2026-11-28 21:10:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0060'
down_revision = '0050'
branch_labels = None
depends_on = None


def upgrade():
    # "" for the clients there are: their tokens, issued before, carry no registration and
    # keep working until they expire; a client added from now on gets a random one.
    with op.batch_alter_table('service_clients') as batch:
        batch.add_column(sa.Column('registration', sa.String(length=32), nullable=False,
                                   server_default=''))


def downgrade():
    with op.batch_alter_table('service_clients') as batch:
        batch.drop_column('registration')
