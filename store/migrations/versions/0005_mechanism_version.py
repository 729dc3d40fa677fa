"""A memory's mechanism version: moved by triggers whenever its episodes, facts or traces change.

The gateway keeps what it last loaded of a memory's episodes, facts and traces and reuses it while the
version has not moved. Triggers rather than application code, so no writer (hot path, lane, a future one)
can change them without moving the version. The version lives on the memory's row, so a write to them
also waits for the memory's row lock: nothing changes under a decorate in progress.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None

_TABLES = ("episodes", "facts", "traces")


def upgrade() -> None:
    op.add_column('memories', sa.Column('mechanism_version', sa.BigInteger(), server_default='0', nullable=False))
    # Inserts: once per statement, over the rows it added (a cut or a batch of traces is one statement).
    op.execute("""
        CREATE FUNCTION lethe_mechanism_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE memories SET mechanism_version = mechanism_version + 1
            WHERE id IN (SELECT DISTINCT memory_pk FROM added);
            RETURN NULL;
        END $$
    """)
    # Updates: per row, and only when something the mechanism reads changed (a note ask's counter does not).
    op.execute("""
        CREATE FUNCTION lethe_mechanism_updated() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE memories SET mechanism_version = mechanism_version + 1 WHERE id = NEW.memory_pk;
            RETURN NULL;
        END $$
    """)
    for table in _TABLES:
        op.execute(f"""
            CREATE TRIGGER {table}_mechanism_inserted AFTER INSERT ON {table}
            REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION lethe_mechanism_inserted()
        """)
    op.execute("""
        CREATE TRIGGER episodes_mechanism_updated AFTER UPDATE ON episodes FOR EACH ROW
        WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.facts_written IS DISTINCT FROM NEW.facts_written
              OR OLD.sealed_without_facts IS DISTINCT FROM NEW.sealed_without_facts)
        EXECUTE FUNCTION lethe_mechanism_updated()
    """)
    for table in ("facts", "traces"):
        op.execute(f"""
            CREATE TRIGGER {table}_mechanism_updated AFTER UPDATE ON {table} FOR EACH ROW
            EXECUTE FUNCTION lethe_mechanism_updated()
        """)


def downgrade() -> None:
    for table in _TABLES:
        op.execute(f"DROP TRIGGER {table}_mechanism_inserted ON {table}")
        op.execute(f"DROP TRIGGER {table}_mechanism_updated ON {table}")
    op.execute("DROP FUNCTION lethe_mechanism_inserted()")
    op.execute("DROP FUNCTION lethe_mechanism_updated()")
    op.drop_column('memories', 'mechanism_version')
