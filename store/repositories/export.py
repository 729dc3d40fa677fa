"""Everything a memory holds, section by section, row by row: what its export streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from store.models import (
    BoundaryScore,
    Decoration,
    Entity,
    EntityAlias,
    EpisodeTransition,
    Fact,
    Memory,
    Message,
    NoteCall,
    Passage,
    RecallBlock,
    RecallWalk,
    Trace,
)
from store.models import Episode as EpisodeRow

__all__ = ["SECTIONS", "memory_row", "section_rows"]

# Each section in its natural order.
SECTIONS: dict[str, tuple[Any, Any]] = {
    "messages": (Message, Message.seq),
    "decorations": (Decoration, Decoration.at),
    "episodes": (EpisodeRow, EpisodeRow.first_seq),
    "episode_transitions": (EpisodeTransition, EpisodeTransition.id),
    "traces": (Trace, Trace.id),
    "facts": (Fact, Fact.id),
    "note_calls": (NoteCall, NoteCall.id),
    "boundary_scores": (BoundaryScore, BoundaryScore.unit_first_seq),
    # The graph: entities and every name they were given; facts above carry merges (`merged_into`) and
    # retirements (`retired_at`, `retired_by`); passages of sealed and forgotten episodes.
    "entities": (Entity, Entity.id),
    "entity_aliases": (EntityAlias, EntityAlias.id),
    "passages": (Passage, Passage.id),
    # Recall: each turn's block as first placed and as distilled (`distilled_text`, `removed`), with the fact
    # and passage ids it held; and the walks the lane prepared, each fact's level by id.
    "recall_blocks": (RecallBlock, RecallBlock.turn),
    "recall_walks": (RecallWalk, RecallWalk.for_turn),
}

# Vectors and word indexes are derived from the text exported beside them; they would only bloat the export.
_DERIVED = ("embedding", "words")


def _row(obj: Any, skip: tuple[str, ...] = ("memory_pk", "tenant_id", *_DERIVED)) -> dict[str, Any]:
    return {c.key: getattr(obj, c.key) for c in obj.__table__.columns if c.key not in skip}


def memory_row(memory: Memory) -> dict[str, Any]:
    return _row(memory, skip=("id", "tenant_id"))


async def section_rows(
    session: AsyncSession, name: str, *, tenant_id: str, memory_pk: int
) -> AsyncIterator[dict[str, Any]]:
    """The rows of one section as plain dicts, streamed (a long memory is never loaded whole)."""
    model, order = SECTIONS[name]
    stream = await session.stream_scalars(
        select(model).where(model.tenant_id == tenant_id, model.memory_pk == memory_pk).order_by(order))
    async for obj in stream:
        yield _row(obj)
