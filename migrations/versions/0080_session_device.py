"""the device each session was opened from, so that "is this a new device" is one probe of an
index rather than a read of the account's sessions

Revision ID: 0080
Revises: 0070
Create Date: 2026-11-28 21:00:00.000000

"""
import hashlib
import ipaddress

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0080'
down_revision = '0070'
branch_labels = None
depends_on = None

BATCH = 5000


def _device(ip, user_agent):
    # app/domain/device_names.py's device_of as it was when this revision was written: a
    # migration keeps the meaning of its own time.
    try:
        address = ipaddress.ip_address((ip or "").split("%", 1)[0])
    except ValueError:
        network = ip or ""
    else:
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            network = str(address.ipv4_mapped)
        elif isinstance(address, ipaddress.IPv6Address):
            network = str(ipaddress.IPv6Network((int(address), 64), strict=False))
        else:
            network = str(address)
    return hashlib.sha256(f"{network}\n{user_agent or ''}".encode()).hexdigest()[:32]


def upgrade():
    with op.batch_alter_table('sessions') as batch:
        batch.add_column(sa.Column('device', sa.String(length=32), nullable=True))
        batch.create_index('ix_sessions_user_device', ['user_id', 'device'])
    # The sessions kept so far, in batches: a device they were opened from stays known.
    sessions = sa.table('sessions', sa.column('id', sa.String), sa.column('ip', sa.String),
                        sa.column('user_agent', sa.String), sa.column('device', sa.String))
    connection = op.get_bind()
    after = ''
    while True:
        rows = connection.execute(
            sa.select(sessions.c.id, sessions.c.ip, sessions.c.user_agent)
            .where(sessions.c.id > after).order_by(sessions.c.id).limit(BATCH)).all()
        if not rows:
            break
        connection.execute(
            sessions.update().where(sessions.c.id == sa.bindparam('b_id'))
            .values(device=sa.bindparam('b_device')),
            [{'b_id': row.id, 'b_device': _device(row.ip, row.user_agent)} for row in rows])
        after = rows[-1].id


def downgrade():
    with op.batch_alter_table('sessions') as batch:
        batch.drop_index('ix_sessions_user_device')
        batch.drop_column('device')
