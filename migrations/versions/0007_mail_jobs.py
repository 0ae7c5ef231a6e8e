"""mail jobs: the outbox in the database

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 16:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('mail_jobs',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('payload', sa.JSON(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('next_attempt_at', sa.DateTime(), nullable=False),
    sa.Column('claimed_by', sa.String(length=64), nullable=True),
    sa.Column('claimed_until', sa.DateTime(), nullable=True),
    sa.Column('last_error', sa.String(length=64), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('finished_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('mail_jobs', schema=None) as batch_op:
        batch_op.create_index('ix_mail_jobs_status_next_attempt', ['status', 'next_attempt_at'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_mail_jobs_finished_at'), ['finished_at'],
                              unique=False)


def downgrade():
    with op.batch_alter_table('mail_jobs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_mail_jobs_finished_at'))
        batch_op.drop_index('ix_mail_jobs_status_next_attempt')

    op.drop_table('mail_jobs')
