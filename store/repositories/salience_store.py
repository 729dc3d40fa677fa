"""Salience in the store: episodes not yet judged, the user's tone baseline, and the judgments saved with it.

The lane's `judge_salience` writes acts and the baseline in one transaction under the memory's row lock, only
onto episodes still unjudged: an episode is judged once, and a retried job folds no message twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from engine.episodes import Episode, EpisodeState
from engine.messages import StoredMessage
from engine.tone import ToneBaseline
from store.models import EpisodeRow, MessageRow
from store.models.salience import ToneBaselineRow
from store.repositories.episode_store import as_episode

__all__ = ["Judged", "acts", "load_baseline", "save_judgments", "unjudged_episodes", "user_messages"]


@dataclass(frozen=True)
class Judged:
    """One episode's salience as judged: its act, the intensity of the user's tone, and their salience."""

    episode_id: str
    act: str
    intensity: float
    salience: float


async def unjudged_episodes(session: AsyncSession, *, tenant_id: str, memory_pk: int, limit: int) -> list[Episode]:
    """Remembered episodes whose act is not judged yet, in history order. A forgotten one is never ranked
    again, so it is left as it is."""
    rows = await session.execute(
        select(EpisodeRow)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk, EpisodeRow.act.is_(None),
               EpisodeRow.state != EpisodeState.FORGOTTEN.value)
        .order_by(EpisodeRow.first_seq)
        .limit(limit)
    )
    return [as_episode(row) for row in rows.scalars()]


async def acts(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, episode_keys: Sequence[str]
) -> dict[str, str]:
    """The judged acts of these episodes, by key (an unjudged one is absent)."""
    if not episode_keys:
        return {}
    rows = await session.execute(
        select(EpisodeRow.episode_key, EpisodeRow.act)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
               EpisodeRow.episode_key.in_(list(episode_keys)), EpisodeRow.act.is_not(None))
    )
    return {key: act for key, act in rows if act is not None}


async def user_messages(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, after_seq: int, through_seq: int
) -> list[StoredMessage]:
    """The user's own messages with seq in (after_seq, through_seq], in order: what the tone baseline folds."""
    rows = await session.execute(
        select(MessageRow.seq, MessageRow.turn, MessageRow.at, MessageRow.body, MessageRow.tokens)
        .where(MessageRow.tenant_id == tenant_id, MessageRow.memory_pk == memory_pk, MessageRow.role == "user",
               MessageRow.seq > after_seq, MessageRow.seq <= through_seq)
        .order_by(MessageRow.seq)
    )
    messages = [StoredMessage(seq=s, turn=t, at=at, body=body, tokens=tokens) for s, t, at, body, tokens in rows]
    # A tool result in a user-role message (Anthropic's shape) is not the user speaking.
    return [m for m in messages if m.kind == "user"]


async def load_baseline(session: AsyncSession, *, tenant_id: str, memory_pk: int) -> ToneBaseline:
    row = await session.get(ToneBaselineRow, memory_pk)
    if row is None or row.tenant_id != tenant_id:
        return ToneBaseline()
    stats = {name: (float(pair[0]), float(pair[1])) for name, pair in (row.stats or {}).items()}
    return ToneBaseline(messages=row.messages, through_seq=row.through_seq, stats=stats)


async def save_judgments(
    session: AsyncSession, *, tenant_id: str, memory_pk: int, judged: Sequence[Judged], baseline: ToneBaseline
) -> int:
    """Store acts onto episodes still unjudged and the baseline when it moved on; the caller holds the memory's
    lock. Returns how many episodes were judged now."""
    keys = [j.episode_id for j in judged]
    open_keys = set((await session.execute(
        select(EpisodeRow.episode_key)
        .where(EpisodeRow.tenant_id == tenant_id, EpisodeRow.memory_pk == memory_pk,
               EpisodeRow.episode_key.in_(keys), EpisodeRow.act.is_(None))
    )).scalars()) if keys else set()
    todo = [j for j in judged if j.episode_id in open_keys]
    if todo:
        table = cast(Table, EpisodeRow.__table__)
        connection = await session.connection()
        await connection.execute(
            update(table)
            .where(table.c.tenant_id == tenant_id, table.c.memory_pk == memory_pk,
                   table.c.episode_key == bindparam("key"), table.c.act.is_(None))
            .values(act=bindparam("new_act"), intensity=bindparam("new_intensity"),
                    salience=bindparam("new_salience")),
            [{"key": j.episode_id, "new_act": j.act, "new_intensity": j.intensity, "new_salience": j.salience}
             for j in todo],
        )
    stats = {name: [mean, m2] for name, (mean, m2) in baseline.stats.items()}
    statement = insert(ToneBaselineRow).values(memory_pk=memory_pk, tenant_id=tenant_id, messages=baseline.messages,
                                               through_seq=baseline.through_seq, stats=stats)
    await session.execute(statement.on_conflict_do_update(
        index_elements=[ToneBaselineRow.memory_pk],
        set_={"messages": statement.excluded.messages, "through_seq": statement.excluded.through_seq,
              "stats": statement.excluded.stats},
        # Only forward: a retry that read an older baseline never winds it back.
        where=ToneBaselineRow.through_seq < statement.excluded.through_seq,
    ))
    return len(todo)
