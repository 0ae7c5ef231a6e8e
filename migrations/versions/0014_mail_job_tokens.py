"""mail_jobs.token_sealed: the token of the link a job mailed, sealed, so a retry mails it again

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 10:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('mail_jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('token_sealed', sa.LargeBinary(), nullable=True))


def downgrade():
    with op.batch_alter_table('mail_jobs', schema=None) as batch_op:
        batch_op.drop_column('token_sealed')
