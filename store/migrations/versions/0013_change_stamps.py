"""Change stamps: each episode, fact and trace row carries the mechanism version its last change made.

The gateway keeps a memory's episodes and traces between calls (service/memory_cache.py). Before this, any change
made it reload all of them, and a long memory has tens of thousands. With a stamp, it reads only the rows
stamped after the version it holds. The stamp is taken under the memory's row lock (`FOR UPDATE`), the same
lock the version's own triggers (migration 0005) take, so stamps commit in the order they are given: a reader
holding the memory's lock never sees a later stamp before an earlier one.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

_TABLES = ("episodes", "facts", "traces")


def upgrade() -> None:
    # The version the statement's own trigger will move to: rows of one statement share it; a later statement
    # in the same transaction reads the version the earlier one moved, so its rows get the next.
    op.execute("""
        CREATE FUNCTION lethe_change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            SELECT mechanism_version + 1 INTO NEW.changed_version FROM memories WHERE id = NEW.memory_pk
            FOR UPDATE;
            RETURN NEW;
        END $$
    """)
    for table in _TABLES:
        op.add_column(table, sa.Column('changed_version', sa.BigInteger(), server_default='0', nullable=False))
        op.create_index(f'ix_{table}_changed', table, ['memory_pk', 'changed_version'])
        op.execute(f"""
            CREATE TRIGGER {table}_change_stamp BEFORE INSERT OR UPDATE ON {table}
            FOR EACH ROW EXECUTE FUNCTION lethe_change_stamp()
        """)


def downgrade() -> None:
    for table in _TABLES:
        op.execute(f"DROP TRIGGER {table}_change_stamp ON {table}")
        op.drop_index(f'ix_{table}_changed', table_name=table)
        op.drop_column(table, 'changed_version')
    op.execute("DROP FUNCTION lethe_change_stamp()")
