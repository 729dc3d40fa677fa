"""Everything a memory holds, section by section, row by row: what its export streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import (
    BoundaryScoreRow,
    DecorationRow,
    EntityAliasRow,
    EntityRow,
    EpisodeRow,
    EpisodeTransitionRow,
    FactRow,
    MessageRow,
    NoteCallRow,
    PassageRow,
    RecallBlockRow,
    RecallWalkRow,
    ReplacedMessageRow,
    TraceRow,
)
from store.models.salience import ToneBaselineRow
from store.records import MemoryRecord, row_of

__all__ = ["SECTIONS", "memory_row", "section_rows"]

# Each section in its natural order.
SECTIONS: dict[str, tuple[Any, Any]] = {
    "messages": (MessageRow, MessageRow.seq),
    # User messages the agent replaced before a reply (an edit, a regenerate): out of the history, kept here.
    "replaced_messages": (ReplacedMessageRow, ReplacedMessageRow.id),
    "decorations": (DecorationRow, DecorationRow.at),
    "episodes": (EpisodeRow, EpisodeRow.first_seq),
    "episode_transitions": (EpisodeTransitionRow, EpisodeTransitionRow.id),
    "traces": (TraceRow, TraceRow.id),
    "facts": (FactRow, FactRow.id),
    "note_calls": (NoteCallRow, NoteCallRow.id),
    "boundary_scores": (BoundaryScoreRow, BoundaryScoreRow.unit_first_seq),
    # The graph: entities and every name they were given; facts above carry merges (`merged_into`) and
    # retirements (`retired_at`, `retired_by`); passages of sealed and forgotten episodes.
    "entities": (EntityRow, EntityRow.id),
    "entity_aliases": (EntityAliasRow, EntityAliasRow.id),
    "passages": (PassageRow, PassageRow.id),
    # Recall: each turn's block as first placed and as distilled (`distilled_text`, `removed`), with the fact
    # and passage ids it held; and the walks the lane prepared, each fact's level by id.
    "recall_blocks": (RecallBlockRow, RecallBlockRow.turn),
    "recall_walks": (RecallWalkRow, RecallWalkRow.for_turn),
    # Salience: episodes above carry their act, intensity and salience; this is the user's usual tone they were
    # judged against (at most one row).
    "tone_baselines": (ToneBaselineRow, ToneBaselineRow.memory_pk),
}

# Vectors and word indexes are derived from the text exported beside them; they would only bloat the export.
_DERIVED = ("embedding", "words")


def _row(obj: Any, skip: tuple[str, ...] = ("memory_pk", "tenant_id", *_DERIVED)) -> dict[str, Any]:
    return {c.key: getattr(obj, c.key) for c in obj.__table__.columns if c.key not in skip}


def memory_row(memory: MemoryRecord) -> dict[str, Any]:
    """The memory's own columns, as the export's head."""
    return _row(row_of(memory), skip=("id", "tenant_id"))


async def section_rows(
    session: AsyncSession, name: str, *, tenant_id: str, memory_pk: int
) -> AsyncIterator[dict[str, Any]]:
    """The rows of one section as plain dicts, streamed (a long memory is never loaded whole)."""
    model, order = SECTIONS[name]
    stream = await session.stream_scalars(
        select(model).where(model.tenant_id == tenant_id, model.memory_pk == memory_pk).order_by(order))
    async for obj in stream:
        yield _row(obj)
