"""The change stamp's lock on the memory's row is `FOR NO KEY UPDATE`, the lock the hot path now takes.

A transaction that only adds rows pointing at a memory (a passage, an entity, a prepared walk) holds a
key-share lock on the memory's row until it commits. `FOR UPDATE` waits for that lock: a decorate waited for
the lane's indexing, and a decorate holding the row's lock that then stamped an episode asked for `FOR UPDATE`
over it, waiting on a lane transaction that in turn waited on the decorate. `FOR NO KEY UPDATE` orders stamps
against each other and against the version's own update as before, and leaves key-share locks alone.

Revision ID: 0030
Revises: 0029
"""

from __future__ import annotations

from alembic import op

revision = '0030'
down_revision = '0029'
branch_labels = None
depends_on = None

_STAMP = """
    CREATE OR REPLACE FUNCTION lethe_change_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        SELECT mechanism_version + 1 INTO NEW.changed_version FROM memories WHERE id = NEW.memory_pk
        FOR {lock};
        RETURN NEW;
    END $$
"""


def upgrade() -> None:
    op.execute(_STAMP.format(lock="NO KEY UPDATE"))


def downgrade() -> None:
    op.execute(_STAMP.format(lock="UPDATE"))
