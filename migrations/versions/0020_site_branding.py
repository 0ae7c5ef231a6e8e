"""how a site shows on the hosted pages: its display name, accent colour, logo and links

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-27 08:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None

COLUMNS = (
    ('display_name', sa.String(length=80)),
    ('accent_color', sa.String(length=7)),
    ('logo', sa.LargeBinary()),
    ('logo_type', sa.String(length=32)),
    ('home_url', sa.String(length=2048)),
    ('privacy_url', sa.String(length=2048)),
    ('terms_url', sa.String(length=2048)),
)


def upgrade():
    with op.batch_alter_table('client_sites') as batch:
        for name, kind in COLUMNS:
            batch.add_column(sa.Column(name, kind, nullable=True))


def downgrade():
    with op.batch_alter_table('client_sites') as batch:
        for name, _kind in reversed(COLUMNS):
            batch.drop_column(name)
