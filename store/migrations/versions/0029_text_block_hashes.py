"""A message whose content is one plain text block is recognised by the same hash as the message with that
text as its content (`engine.recognition.agent_hash`). The agent hashes stored before are made again so, or an
agent resending such a message after the upgrade would not be recognised (its history taken for an edit).

Revision ID: 0029
Revises: 0028
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from alembic import op

from engine.recognition import agent_hash, content_hash, rehashed

revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None

# Only these bodies can hash otherwise now: a content of one block with a type and a text, nothing else.
_CANDIDATES = sa.text(
    "SELECT id, body, agent_hash FROM messages WHERE agent_hash IS NOT NULL "
    "AND jsonb_typeof(body->'content') = 'array' AND jsonb_array_length(body->'content') = 1 "
    "AND body->'content'->0->>'type' = 'text' AND (SELECT count(*) FROM jsonb_object_keys(body->'content'->0)) = 2")


def _rehash(make: Callable[[Any, str], str]) -> None:
    connection = op.get_bind()
    changed = []
    for pk, body, stored in connection.execute(_CANDIDATES):
        body = json.loads(body) if isinstance(body, str) else body
        now = make(body, stored)
        if now != stored:
            changed.append({"pk": pk, "hash": now})
    if changed:
        connection.execute(sa.text("UPDATE messages SET agent_hash = :hash WHERE id = :pk"), changed)


def upgrade() -> None:
    _rehash(lambda body, stored: rehashed(body, stored) or stored)


def downgrade() -> None:
    # Back to the body's own hash where the newer one is the body's.
    _rehash(lambda body, stored: content_hash(body) if stored == agent_hash(body) else stored)
