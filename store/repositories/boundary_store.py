"""The lane's boundary scores for closed units, which cutting reads.

The hot path and the lane both go through here under the memory's row lock (`memories.lock_memory`).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.cutting import BoundaryScores
from store.models import BoundaryScoreRow

__all__ = ["load_boundary_scores", "save_boundary_scores"]


async def load_boundary_scores(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, after_seq: int = 0
) -> dict[int, BoundaryScores]:
    """Scores keyed by a unit's first seq, as `engine.cutting.cut_closed` takes them."""
    rows = await session.execute(
        select(BoundaryScoreRow.unit_first_seq, BoundaryScoreRow.first_score, BoundaryScoreRow.last_score)
        .where(BoundaryScoreRow.tenant_id == tenant_id, BoundaryScoreRow.memory_pk == memory_pk,
               BoundaryScoreRow.unit_first_seq > after_seq)
    )
    return {seq: BoundaryScores(first=first, last=last) for seq, first, last in rows}


async def save_boundary_scores(
    session: AsyncSession,
    *,
    tenant_id: str,
    memory_pk: int,
    scores: Mapping[tuple[int, int], BoundaryScores],
    judge: str,
) -> None:
    """Scores keyed by (unit first seq, unit last seq); a unit scored already keeps its first score."""
    if not scores:
        return
    await session.execute(
        insert(BoundaryScoreRow)
        .values([
            {"memory_pk": memory_pk, "tenant_id": tenant_id, "unit_first_seq": first, "unit_last_seq": last,
             "first_score": s.first, "last_score": s.last, "judge": judge}
            for (first, last), s in scores.items()
        ])
        .on_conflict_do_nothing(index_elements=["memory_pk", "unit_first_seq"])
    )
