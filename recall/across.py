"""Recall across a user's conversations (issue #37): the user's graph is a memory of its own (kind
`user_graph`), searched and walked as any memory is, under the same deadline as the conversation's own recall.

What it finds is kept only when it came from another conversation: a fact this conversation noted is in its own
graph already, and its own quiet turns are in its history. The rest is marked `elsewhere`, so the block dates it
as another conversation's. The score floor applies as it does to any memory: a message that touches nothing in
the user's graph gets nothing from it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from engine.recall.grouping import Recalled, RecalledFact
from store.db import Database
from store.repositories import user_recall

if TYPE_CHECKING:
    from recall.find import Found, Recaller

__all__ = ["find_across", "from_elsewhere"]

log = logging.getLogger(__name__)


async def find_across(recaller: Recaller, db: Database, *, tenant_id: str, memory_id: str,
                      history: Sequence[Mapping[str, Any]], text: str, ends: float,
                      user_id: str | None) -> Found | None:
    """What the user's graph holds for the message from their other conversations; None with no user."""
    key = (tenant_id, memory_id)
    if user_id is None and key in recaller.userless:
        return None  # most memories have no user: no read for them on every recall
    graph = recaller.graphs.get(key)
    if graph is None:
        async with db.session() as session:
            graph = await user_recall.user_graph(session, tenant_id=tenant_id, memory_id=memory_id,
                                                 user_id=user_id)
        if graph is not None and graph.bound:
            recaller.graphs[key] = graph
    if graph is None:
        recaller.userless[key] = True
        return None
    recaller.userless.pop(key, None)
    if asyncio.get_running_loop().time() >= ends:
        return None
    # The graph's hits over the score floor and their bridges, not an inline walk: a user's graph has no walk
    # prepared for this conversation's turn, and judging its candidates would be the turn's slowest part.
    found = await recaller.find_in(db, tenant_id=tenant_id, memory_id=graph.memory_id, history=history, text=text,
                                   ends=ends, walk=False)
    if found is None or not found.items:
        return None
    items = from_elsewhere(found.items, own_pk=graph.own_pk)
    log.debug("recall across conversations: %d of %d kept", len(items), len(found.items),
              extra={"memory_id": memory_id})
    return replace(found, items=items) if items else None


def from_elsewhere(items: Sequence[Recalled], *, own_pk: int | None) -> list[Recalled]:
    """The items of other conversations (by the origin each was read with), marked so; a fact replaced by one of
    this conversation goes with it (an earlier value is never shown alone: `engine.recall.grouping.admissible`
    drops it). The origin is left out of what is kept: a block shows and stores the mark, not another
    conversation's key."""
    kept: list[Recalled] = []
    for item in items:
        if own_pk is not None and item.origin_pk == own_pk:
            continue
        if isinstance(item, RecalledFact):
            kept.append(replace(item, elsewhere=True, origin_pk=None))
        else:
            kept.append(replace(item, elsewhere=True, origin_pk=None,
                                since=tuple(replace(f, elsewhere=True, origin_pk=None) for f in item.since)))
    return kept
