"""client sites as OpenID Connect clients; sessions and codes of a client; consent grants

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23 19:00:00.000000

"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('client_sites', schema=None) as batch_op:
        batch_op.add_column(sa.Column('post_logout_redirect_uris', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('client_secret_hash', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('token_endpoint_auth_method', sa.String(length=32),
                                      server_default='none', nullable=False))
        batch_op.add_column(sa.Column('scopes', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('first_party', sa.Boolean(), server_default=sa.true(),
                                      nullable=False))
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('client_id', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('scope', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('browser_session_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_sessions_browser_session_id'),
                              ['browser_session_id'], unique=False)
    with op.batch_alter_table('handoff_codes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('client_id', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('scope', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('nonce', sa.String(length=255), nullable=True))
        batch_op.add_column(sa.Column('auth_time', sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column('browser_session_id', sa.String(length=36), nullable=True))
    op.create_table('consent_grants',
    sa.Column('user_id', sa.String(length=36), nullable=False),
    sa.Column('client_id', sa.String(length=64), nullable=False),
    sa.Column('scope', sa.String(length=255), nullable=False),
    sa.Column('granted_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'client_id')
    )


def downgrade():
    op.drop_table('consent_grants')
    with op.batch_alter_table('handoff_codes', schema=None) as batch_op:
        for column in ('browser_session_id', 'auth_time', 'nonce', 'scope', 'client_id'):
            batch_op.drop_column(column)
    with op.batch_alter_table('sessions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_sessions_browser_session_id'))
        for column in ('browser_session_id', 'scope', 'client_id'):
            batch_op.drop_column(column)
    with op.batch_alter_table('client_sites', schema=None) as batch_op:
        for column in ('first_party', 'scopes', 'token_endpoint_auth_method',
                       'client_secret_hash', 'post_logout_redirect_uris'):
            batch_op.drop_column(column)
