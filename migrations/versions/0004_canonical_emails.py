"""canonical email addresses; when each address was proved

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 15:40:00

Until now an address was keyed with str.casefold(), which makes `ß` and `ss` (and `ς` and `σ`) one
account. Every row is re-keyed to the canonical form of app/domain/addresses.py. Rows whose new
keys would collide are NOT merged: they keep their old key and address, and are listed in the
migration's log, for an operator to settle (for example by disabling one of the accounts).
"""
import logging
from collections import defaultdict

import sqlalchemy as sa
from alembic import op

from app.domain.addresses import canonical
from app.domain.errors import InvalidBody

# revision identifiers, used by Alembic.
revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None

log = logging.getLogger("svc_auth.migrations")  # printed with alembic's own output


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('email_verified_at', sa.DateTime(), nullable=True))
    _canonicalise()


def _canonicalise():
    connection = op.get_bind()
    users = sa.table('users', sa.column('id'), sa.column('email'), sa.column('email_key'))
    tokens = sa.table('one_time_tokens', sa.column('user_id'), sa.column('email'))
    rows = connection.execute(sa.select(users.c.id, users.c.email, users.c.email_key)).all()
    by_key = defaultdict(list)
    for user_id, email, old_key in rows:
        try:
            by_key[canonical(email)].append((user_id, email, old_key))
        except InvalidBody:
            log.warning("users.id=%s: the address is not valid under the canonical rules; "
                        "left as it was", user_id)
    changes = []
    for new_key, owners in by_key.items():
        if len(owners) > 1:
            log.warning("these accounts share the canonical address %r and were left as they "
                        "were, not merged: users.id in (%s)", new_key,
                        ", ".join(user_id for user_id, _, _ in owners))
            continue
        user_id, email, old_key = owners[0]
        if (email, old_key) != (new_key, new_key):
            changes.append((user_id, email, new_key))
    # Two steps, so that a key moving from one row to another never meets itself on the way.
    for user_id, _, _ in changes:
        connection.execute(users.update().where(users.c.id == user_id)
                           .values(email_key=f"migrating:{user_id}"))
    for user_id, old_email, new_key in changes:
        connection.execute(users.update().where(users.c.id == user_id)
                           .values(email=new_key, email_key=new_key))
        # Outstanding links were sent to the same mailbox: keep them working.
        connection.execute(tokens.update().where(tokens.c.user_id == user_id,
                                                 tokens.c.email == old_email)
                           .values(email=new_key))


def downgrade():
    # The canonical addresses stay: they are valid addresses, and casefold keys cannot be told
    # apart again once two were distinct.
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('email_verified_at')
