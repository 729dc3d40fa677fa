"""Recall in the hot path: for a new user message, search the memory's graph and passages and walk the
candidates, before the decorate takes the memory's lock, so the locked transaction stays short.

All of it, from the first read to the last, runs under one deadline (`LETHE_RECALL_INLINE_DEADLINE_MS`). The
lane's prepared walk for this turn, when ready, is taken as it is and the message's own hits are walked on top
of it. When the deadline passes, what is done is used as it is: the prepared walk's kept facts and the search
hits so far; with nothing, no block. What was used is the block's `provenance`: prepared or inline (walked in
time), hits (searched in time, not walked), partial (the searches cut short). A message that touches nothing in
the memory (`engine.recall.floor`) is not walked and adds no hit: its block holds only what a prepared walk kept.

A find left behind by its deadline stops between queries, never in one (`recall.deadline` says why).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cachetools import LRUCache, TTLCache

from engine.messages import item_kind
from engine.recall.grouping import Recalled
from engine.recall.walk import is_kept, kept_in_order
from engine.texts import item_text
from providers.embedder import Embedder
from providers.judge import Judge
from providers.usage import UsageScope
from recall.config import RecallConfig
from recall.deadline import Progress, abandon, let_go
from recall.search import MessageSearch, Searches
from recall.walking import walk_candidates
from store.db import Database
from store.repositories import recall_graph, recall_reads
from store.repositories.recall_search import Candidates
from store.repositories.user_recall import UserGraph

__all__ = ["Found", "Recaller", "merged", "new_user_text", "ranked_items"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Found:
    """What recall found for one user message (its text), ranked best first, and how."""

    text: str
    items: list[Recalled]
    provenance: str


def new_user_text(history: Sequence[Mapping[str, Any]]) -> str | None:
    """The text of the request's last item when it is a user message: only then can there be a new turn."""
    if not history or item_kind(history[-1]) != "user":
        return None
    return item_text(history[-1])


@dataclass(frozen=True)
class Recaller:
    """The embedder, the judge and recall's numbers, built once per gateway."""

    embedder: Embedder
    judge: Judge
    config: RecallConfig = field(default_factory=RecallConfig)
    # Memories last seen with nothing to recall (a young memory holds no fact or passage yet): their messages
    # are embedded only once the memory is read and found to hold something. Embedding runs on in its thread
    # even when its task is cancelled, taking a core from the call it would only have slowed down.
    barren: LRUCache[tuple[str, str], bool] = field(default_factory=lambda: LRUCache(maxsize=10_000))
    # Each memory's pk as last read: with it, the message's search by words runs beside the first read instead
    # of after it. A memory erased and made again has a new pk, which the first read tells (the search then
    # runs again with it).
    pks: LRUCache[tuple[str, str], int] = field(default_factory=lambda: LRUCache(maxsize=10_000))
    # Whether a memory with a user recalls from the user's graph too (issue #37).
    across: bool = True
    # Memories found to have no user: not looked up again for a minute. A memory gets its user from a call that
    # names one, which looks again; the minute covers a call through another gateway replica.
    userless: TTLCache[tuple[str, str], bool] = field(default_factory=lambda: TTLCache(maxsize=10_000, ttl=60))
    # The user's graph of each memory bound to a user: a memory's user is fixed once bound, so only an erase and a
    # new memory of the same id change it, which the minute covers as it does for `userless`.
    graphs: TTLCache[tuple[str, str], UserGraph] = field(default_factory=lambda: TTLCache(maxsize=10_000, ttl=60))

    async def find(self, db: Database, *, tenant_id: str, memory_id: str,
                   history: Sequence[Mapping[str, Any]], user_id: str | None = None) -> Found | None:
        """What recall found for the request's new user message, all of it within the deadline: past it, the
        prepared walk's kept facts and whatever search hits are done (provenance `hits` when the searches
        were done and the walk was not, `partial` when the searches were cut short), else no block. Never
        raises for a deadline: decorate goes on without recall.

        A memory with a user (bound, or named by this call: `user_id`) recalls from its own memory first, then
        from the user's graph, both under the one deadline (`recall.across`)."""
        text = new_user_text(history)
        if not text or not text.strip():
            return None
        ends = asyncio.get_running_loop().time() + self.config.deadline_seconds
        own = self.find_in(db, tenant_id=tenant_id, memory_id=memory_id, history=history, text=text, ends=ends)
        if not self.across:
            return await own
        from recall.across import find_across  # recall.across builds on this module
        across = find_across(self, db, tenant_id=tenant_id, memory_id=memory_id, history=history, text=text,
                             ends=ends, user_id=user_id)
        found, crossed = await asyncio.gather(own, across)
        return merged(found, crossed)

    async def find_in(self, db: Database, *, tenant_id: str, memory_id: str, history: Sequence[Mapping[str, Any]],
                      text: str, ends: float, walk: bool = True) -> Found | None:
        """Recall from one memory (a conversation, or a user's graph) until `ends` (the event loop's time).
        `walk=False`: with no walk prepared, the message's hits over the score floor and their bridges, as with
        one prepared, and no judge asked inline (a user's graph: its walk would be the turn's slowest part)."""
        deadline = self.config.deadline_seconds
        loop = asyncio.get_running_loop()
        progress = Progress()
        # A task waited on, not awaited under a timeout: past the deadline it is cancelled and left to unwind
        # (a cancelled query's rollback) on its own, so that unwinding never counts against the deadline.
        # The fetch of what a cut-short search found needs a moment of its own inside the deadline.
        finding = asyncio.ensure_future(self._find(db, tenant_id, memory_id, history, text, progress, walk))
        try:
            await asyncio.wait({finding}, timeout=max(0.0, ends - deadline * self.config.fetch_share - loop.time()))
        except asyncio.CancelledError:
            abandon(finding, progress)  # the decorate went without recall (a replay): nor does its search go on
            raise
        if finding.done():
            return finding.result()
        abandon(finding, progress)
        return await self._found_so_far(db, tenant_id, memory_id, text, progress, ends)

    async def _found_so_far(self, db: Database, tenant_id: str, memory_id: str, text: str, progress: Progress,
                            ends: float) -> Found | None:
        """Past the deadline: the search hits and the prepared walk's kept facts, fetched as they are if the
        deadline's last share allows."""
        done = progress.summary(ends - self.config.deadline_seconds)
        if progress.pk is None:
            log.info("recall past its deadline before reading the memory: no block", extra={"memory_id": memory_id})
            return None
        searched = progress.searched.candidates()
        hits, passages = searched.unrated(self.config.floor, facts=self.config.hits,
                                          passages=self.config.passage_hits)
        facts = list(dict.fromkeys([*hits, *kept_in_order(progress.kept, self.config.walk_rules())]))
        if not facts and not passages:
            log.info("recall past its deadline with nothing found yet (%s): no block", done,
                     extra={"memory_id": memory_id})
            return None
        provenance = "hits" if progress.searches_done else "partial"
        fetching = asyncio.ensure_future(self._items(db, tenant_id, progress.pk, facts, passages, searched))
        let_go(fetching)  # should the decorate go first, the fetch still ends on its own
        await asyncio.wait({fetching}, timeout=max(0.0, ends - asyncio.get_running_loop().time()))
        if not fetching.done():
            let_go(fetching)  # two reads by ids: left to finish, so their connection goes back whole
            log.info("recall past its deadline fetching what it found: no block", extra={"memory_id": memory_id})
            return None
        log.info("recall past its deadline (%s): what was found so far, as it is", done,
                 extra={"memory_id": memory_id, "provenance": provenance})
        return Found(text, fetching.result(), provenance)

    async def _find(self, db: Database, tenant_id: str, memory_id: str, history: Sequence[Mapping[str, Any]],
                    text: str, progress: Progress, walk: bool = True) -> Found | None:
        search = MessageSearch(self.embedder, self.config, tenant_id=tenant_id, memory_id=memory_id, text=text,
                               progress=progress, barren=self.barren, pks=self.pks, talk_by_meaning=walk)
        async with db.session() as session, db.session() as passages_session:
            searches = await search.run(session, passages_session, history)
            if searches is None:
                return None
            candidates = progress.searched.candidates()
            if searches.prepared is not None or not walk:
                if searches.prepared is None and not candidates.touches(self.config.floor):
                    return None
                return await self._with_prepared(session, passages_session, tenant_id, text, searches, candidates,
                                                 progress, "prepared" if searches.prepared is not None else "hits")
        if not candidates.touches(self.config.floor):
            # Nothing near the message, nothing of its words: no block (`engine.recall.floor`), and no judge
            # asked to rate neighbours that are there only because a search always has some.
            log.debug("recall: the message touches nothing in the memory", extra={"memory_id": memory_id})
            return None
        # No walk prepared: the message's own hits are walked (a fact they lead to through a bridge is what a
        # two-hop question needs), on a connection of the walk's own.
        return await self._walked(db, tenant_id, memory_id, text, searches, candidates, progress)

    async def _with_prepared(self, session: Any, passages_session: Any, tenant_id: str, text: str,
                             searches: Searches, candidates: Candidates, progress: Progress,
                             provenance: str = "prepared") -> Found:
        """Seed 001: the message finds the walk ready and adds its own search hits, unjudged (the judge may rate
        a paraphrase every search ranks first as only tangential). The judge's walk is left to the lane; one
        step across the entities of the best hits, nearest the message, keeps the bridge a two-hop question
        needs. Order: the best hits, their bridges, the other hits, then the prepared walk's facts (rated
        against the turn before), so a tight budget trims those first. Hits enter only over the score floor
        (`engine.recall.floor`): a message that touches nothing adds none, and then no bridge either."""
        pk = searches.pk
        hits, passage_ids = candidates.unrated(self.config.floor, facts=self.config.hits,
                                               passages=self.config.passage_hits)
        first = hits[:self.config.hits_first]

        async def facts_read() -> tuple[list[int], dict[int, Any]]:
            across = await recall_graph.bridges(session, tenant_id=tenant_id, memory_pk=pk, fact_ids=first,
                                                vector=searches.whole, limit=self.config.bridges) if first else []
            ids = list(dict.fromkeys([*first, *across, *hits, *kept_in_order(progress.kept, self.config.walk_rules())]))
            return ids, await recall_reads.facts_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=ids)

        # The passages are read on their own connection while the bridges are found and the facts read.
        async with progress.step():
            (fact_ids, facts), passages = await asyncio.gather(facts_read(), recall_reads.passages_by_ids(
                passages_session, tenant_id=tenant_id, memory_pk=pk, ids=passage_ids))
        return Found(text, ranked_items(fact_ids, facts, passage_ids, passages, candidates.part_of), provenance)

    async def _walked(self, db: Database, tenant_id: str, memory_id: str, text: str, searches: Searches,
                      candidates: Candidates, progress: Progress) -> Found:
        """The inline walk over the message's hits, and what it kept, read."""
        rules = self.config.walk_rules()
        levels, passage_levels = await walk_candidates(
            db, self.judge, self.embedder, self.config, tenant_id=tenant_id, memory_pk=searches.pk,
            dialogue=searches.dialogue, candidates=candidates, known={}, scope=UsageScope(tenant_id, memory_id),
            step=progress.step)
        facts = kept_in_order(levels, rules)
        passages = [p for p in candidates.passages if is_kept(passage_levels.get(p, 0), rules)]
        async with progress.step():
            items = await self._items(db, tenant_id, searches.pk, facts, passages, candidates)
        return Found(text, items, "inline")

    async def _items(self, db: Database, tenant_id: str, pk: int, fact_ids: Sequence[int],
                     passage_ids: Sequence[int], candidates: Candidates) -> list[Recalled]:
        async with db.session() as session:
            facts = await recall_reads.facts_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=fact_ids)
            passages = await recall_reads.passages_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=passage_ids)
        return ranked_items(fact_ids, facts, passage_ids, passages, candidates.part_of)


def merged(own: Found | None, crossed: Found | None) -> Found | None:
    """This memory's finds first, then the user's graph's: what this conversation holds outranks the others."""
    if own is None or not own.items:
        return crossed if crossed is not None and crossed.items else own
    if crossed is None or not crossed.items:
        return own
    return replace(own, items=[*own.items, *crossed.items])


def ranked_items(fact_ids: Sequence[int], facts: Mapping[int, Any], passage_ids: Sequence[int],
                 passages: Mapping[int, Any], part_of: Mapping[int, str]) -> list[Recalled]:
    """Facts best first, each retired one right after the fact that replaced it, then passages."""
    by_key = {f.key: f for f in facts.values()}
    items: list[Recalled] = []
    placed: set[int] = set()
    for fact_id in fact_ids:
        fact = facts.get(fact_id)
        if fact is None or fact_id in placed:
            continue
        replacement = by_key.get(fact.retired_by) if fact.retired_by else None
        if replacement is not None and replacement.id not in placed:
            items.append(replace(replacement, part=part_of.get(replacement.id)))
            placed.add(replacement.id)
        items.append(replace(fact, part=part_of.get(fact_id)))
        placed.add(fact_id)
    return items + [passages[p] for p in passage_ids if p in passages]
