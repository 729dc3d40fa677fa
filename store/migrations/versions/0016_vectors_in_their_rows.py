"""Embeddings kept in their rows, so a search by meaning reads each vector where its row is.

pgvector's type is stored EXTERNAL: a row past 2 kB (a passage: its text, its words and a 1.5 kB vector) had its
vector moved out to the table's TOAST relation, and a search by meaning over a memory's passages fetched every
vector from there: 45 ms a search at 20,000 passages, against 1.5 ms with the vectors in the rows. PLAIN keeps
them in the row; a long text and its words (which compress) are what moves out instead. Passages written before
have their vectors written again, so those come back into their rows (an unchanged value would keep its TOAST
pointer, so each is copied through its text form). Facts and entities are narrow rows whose vectors stayed in.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None

TABLES = ["passages", "facts", "entities"]


def upgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE PLAIN")
    op.execute("UPDATE passages SET embedding = CAST(CAST(embedding AS text) AS vector) WHERE embedding IS NOT NULL")


def downgrade() -> None:
    for table in TABLES:
        op.execute(f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE EXTERNAL")
