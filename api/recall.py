"""Recall in the hot path: for a new user message, search the memory's graph and passages and walk the
candidates, before the decorate takes the memory's lock, so the locked transaction stays short.

All of it, from the first read to the last, runs under one deadline (`LETHE_RECALL_INLINE_DEADLINE_MS`). The
lane's prepared walk for this turn, when ready, is taken as it is and the message's own hits are walked on top
of it. When the deadline passes, what is done is used as it is: the prepared walk's kept facts and the search
hits so far; with nothing, no block. What was used is the block's `provenance`: prepared or inline (walked in
time), hits (searched in time, not walked), partial (the searches cut short).

A find left behind by its deadline is never cut in the middle of a query: a query cancelled in flight costs its
connection (the pool drops it, and the next call pays for a new one: a Postgres backend, the driver's type
lookups, every statement prepared again), which under load cost more than the query's remaining milliseconds.
It stops at the next step instead, or at once when it is waiting on the embedder or the judge.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from cachetools import LRUCache

from engine.config import MechanismConfig
from engine.messages import item_kind
from engine.recall.grouping import Recalled
from engine.recall.parts import split_parts
from engine.recall.walk import is_kept, kept_in_order, walk
from engine.texts import item_text
from providers.embedder import Embedder, pooled, prime
from providers.judge import Judge
from providers.usage import UsageScope
from store.db import Database
from store.repositories import recall_graph, recall_reads
from store.repositories.recall_search import Candidates, Query, Searched, search_by_meaning, search_by_words

__all__ = ["Found", "Recaller", "new_user_text"]

log = logging.getLogger(__name__)

# The recent conversation searched with the message: this many items before it, this many characters. The
# lane's prepared walk searched the turn before in full; here the conversation only has to set the message in
# its context, and every character of it is embedded (and read by the walk's judge) while the agent waits.
DIALOGUE_ITEMS = 6
DIALOGUE_CHARS = 600
# With a walk prepared, this many of the message's best hits come before what its own walk kept.
HITS_FIRST = 3
# Of the deadline, the share kept back for fetching what a cut-short find had found (a lookup by ids): on a
# loaded machine a fetch can take tens of milliseconds, and a fetch cut short loses everything found.
FETCH_SHARE = 1 / 3


@dataclass(frozen=True)
class Found:
    """What recall found for one user message (its text), ranked best first, and how."""

    text: str
    items: list[Recalled]
    provenance: str


class _Stopped(Exception):
    """A find past its deadline ending at a step's end (`_Progress.step`)."""


def _let_go(task: asyncio.Future[Any]) -> None:
    """Leave a task to end unawaited; what it returns or raises then is of no interest."""
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


def _abandon(task: asyncio.Future[Any], progress: _Progress) -> None:
    """A find past its deadline (or its decorate gone): cancelled at once while it waits on the embedder or the
    judge, else told to stop when its query is back (the module's docstring says why)."""
    progress.stopped = True
    if progress.querying == 0:
        task.cancel()
    _let_go(task)


async def _finished(task: asyncio.Future[Any] | None) -> None:
    """Wait for a task querying on a session its caller is about to close, whatever the task ends with: a
    session closed under a query in flight would break its connection. A cancellation meanwhile is raised
    once the task is done."""
    if task is None:
        return
    _let_go(task)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError


def new_user_text(history: Sequence[Mapping[str, Any]]) -> str | None:
    """The text of the request's last item when it is a user message: only then can there be a new turn."""
    if not history or item_kind(history[-1]) != "user":
        return None
    return item_text(history[-1])


def _dialogue(history: Sequence[Mapping[str, Any]]) -> str:
    lines = [f"{m.get('role') or m.get('type') or 'item'}: {item_text(m)}" for m in history[-DIALOGUE_ITEMS:]
             if item_kind(m) != "instruction"]
    return "\n".join(lines)[-DIALOGUE_CHARS:]


@dataclass
class _Progress:
    """How far a find got, for a deadline that cuts it short: the memory, the prepared walk's kept facts,
    the searches' rankings so far and whether they all finished."""

    pk: int | None = None
    kept: dict[int, int] = field(default_factory=dict)
    searched: Searched = field(default_factory=Searched)
    searches_done: bool = False
    embedded: bool = False
    # When each step ended, in the loop's time: the log of a find cut short says where the time went.
    marks: dict[str, float] = field(default_factory=dict)
    # Queries in flight, and whether the find was left behind: it then ends as the last of them is back.
    querying: int = 0
    stopped: bool = False

    @contextlib.asynccontextmanager
    async def step(self) -> AsyncIterator[None]:
        """Around a step that queries Postgres: not cancelled while it runs, and the find ends after it when
        left behind meanwhile."""
        self.querying += 1
        try:
            yield
        finally:
            self.querying -= 1
        if self.stopped:
            raise _Stopped

    def mark(self, step: str) -> None:
        self.marks[step] = asyncio.get_running_loop().time()

    def steps(self, began: float) -> str:
        return ", ".join(f"{step} at {(at - began) * 1000:.0f} ms" for step, at in self.marks.items()) or "none"


@dataclass(frozen=True)
class Recaller:
    """The embedder, the judge and recall's numbers, built once per gateway."""

    embedder: Embedder
    judge: Judge
    config: MechanismConfig
    deadline_seconds: float = 0.15
    language: str = "simple"
    # Failing the deadline: this many of the fused hits, facts and passages, as they are.
    hits: int = 6
    passage_hits: int = 2
    # With a walk prepared: facts one step across the best hits' entities, nearest the message.
    bridges: int = 3
    # Memories last seen with nothing to recall (a young memory holds no fact or passage yet): their messages
    # are embedded only once the memory is read and found to hold something. Embedding runs on in its thread
    # even when its task is cancelled, taking a core from the call it would only have slowed down.
    barren: LRUCache[tuple[str, str], bool] = field(default_factory=lambda: LRUCache(maxsize=10_000))
    # Each memory's pk as last read: with it, the message's search by words runs beside the first read instead
    # of after it. A memory erased and made again has a new pk, which the first read tells (the search then
    # runs again with it).
    pks: LRUCache[tuple[str, str], int] = field(default_factory=lambda: LRUCache(maxsize=10_000))

    async def find(self, db: Database, *, tenant_id: str, memory_id: str,
                   history: Sequence[Mapping[str, Any]]) -> Found | None:
        """What recall found for the request's new user message, all of it within the deadline: past it, the
        prepared walk's kept facts and whatever search hits are done (provenance `hits` when the searches
        were done and the walk was not, `partial` when the searches were cut short), else no block. Never
        raises for a deadline: decorate goes on without recall."""
        text = new_user_text(history)
        if not text or not text.strip():
            return None
        loop = asyncio.get_running_loop()
        ends = loop.time() + self.deadline_seconds
        progress = _Progress()
        # A task waited on, not awaited under a timeout: past the deadline it is cancelled and left to unwind
        # (a cancelled query's rollback) on its own, so that unwinding never counts against the deadline.
        # The fetch of what a cut-short search found needs a moment of its own inside the deadline.
        finding = asyncio.ensure_future(self._find(db, tenant_id, memory_id, history, text, progress))
        try:
            await asyncio.wait({finding}, timeout=max(0.0, ends - self.deadline_seconds * FETCH_SHARE
                                                      - loop.time()))
        except asyncio.CancelledError:
            _abandon(finding, progress)  # the decorate went without recall (a replay): nor does its search go on
            raise
        if finding.done():
            return finding.result()
        _abandon(finding, progress)
        done = (f"memory read: {progress.pk is not None}, message embedded: {progress.embedded}, "
                f"{len(progress.searched.broad) + len(progress.searched.by_part)} fact searches done; steps "
                f"ended: {progress.steps(ends - self.deadline_seconds)}")
        if progress.pk is None:
            log.info("recall past its deadline before reading the memory: no block", extra={"memory_id": memory_id})
            return None
        searched = progress.searched.candidates()
        facts = list(dict.fromkeys([*searched.facts[:self.hits], *kept_in_order(progress.kept,
                                                                                 self.config.walk_rules())]))
        passages = searched.passages[:self.passage_hits]
        if not facts and not passages:
            log.info("recall past its deadline with nothing found yet (%s): no block", done,
                     extra={"memory_id": memory_id})
            return None
        provenance = "hits" if progress.searches_done else "partial"
        fetching = asyncio.ensure_future(self._items(db, tenant_id, progress.pk, facts, passages, searched))
        _let_go(fetching)  # should the decorate go first, the fetch still ends on its own
        await asyncio.wait({fetching}, timeout=max(0.0, ends - loop.time()))
        if not fetching.done():
            _let_go(fetching)  # two reads by ids: left to finish, so their connection goes back whole
            log.info("recall past its deadline fetching what it found: no block", extra={"memory_id": memory_id})
            return None
        log.info("recall past its deadline (%s): what was found so far, as it is", done,
                 extra={"memory_id": memory_id, "provenance": provenance})
        return Found(text, fetching.result(), provenance)

    async def _find(self, db: Database, tenant_id: str, memory_id: str, history: Sequence[Mapping[str, Any]],
                    text: str, progress: _Progress) -> Found | None:
        scope = UsageScope(tenant_id, memory_id)
        rules = self.config.walk_rules()
        parts = split_parts(text)
        # The message's parts are embedded from the start (CPU, in a thread, while the memory is read and the
        # searches that need no vectors run), the vector of the whole pooled from its parts': the parts are
        # searched anyway, and a sentence the conversation repeats is embedded once.
        key = (tenant_id, memory_id)
        embedding = None if key in self.barren else asyncio.ensure_future(self.embedder.embed(parts, scope=scope))
        talk_embedding: asyncio.Future[Any] | None = None
        async with db.session() as session, db.session() as passages_session:
            async def words(pk: int, texts: list[str], word_parts: list[str], on: Any = passages_session,
                            into: Searched | None = None) -> None:
                async with progress.step():
                    await search_by_words(on, tenant_id=tenant_id, memory_pk=pk, texts=texts, parts=word_parts,
                                          language=self.language, into=into or progress.searched)

            message_words = ([text], parts if len(parts) > 1 else [])
            known_pk = self.pks.get(key) if embedding is not None else None
            # On the other connection, so both start their transactions at once too.
            by_words = asyncio.ensure_future(words(known_pk, *message_words)) if known_pk is not None else None
            try:
                async with progress.step():
                    start = await recall_reads.recall_start(session, tenant_id=tenant_id, memory_id=memory_id)
                if start is None or not start.recallable:
                    self.barren[key] = True
                    return None
                self.pks[key] = start.pk
                if embedding is None:
                    self.barren.pop(key, None)
                    embedding = asyncio.ensure_future(self.embedder.embed(parts, scope=scope))
                pk, prepared = start.pk, start.prepared
                progress.pk = pk
                progress.mark("memory read")
                progress.kept = {k: v for k, v in (prepared or {}).items() if is_kept(v, rules)}
                dialogue = _dialogue(history)
                # The recent conversation is searched too, unless a walk was prepared from it (then the message
                # adds only its own searches) or the request holds only the new message (it would repeat them).
                talk = [dialogue] if prepared is None and \
                    sum(item_kind(m) != "instruction" for m in history[-DIALOGUE_ITEMS:]) > 1 else []
                # The dialogue's parts are what the walk's judge reads next (so they are cached for it).
                talk_parts = split_parts(dialogue) if talk else []
                if talk_parts:
                    talk_embedding = asyncio.ensure_future(self.embedder.embed(talk_parts, scope=scope))
                if by_words is not None and known_pk == pk:
                    # The dialogue's own search on the first connection, while the message's may still run; its
                    # ranking goes after the message's, as one statement would have put it (fusion breaks ties
                    # by order).
                    talk_words = Searched()
                    await asyncio.gather(by_words, *([words(pk, talk, [], session, talk_words)] if talk else []))
                    progress.searched.broad.extend(talk_words.broad)
                else:
                    await _finished(by_words)
                    progress.searched = Searched()  # a stale pk's search found nothing of this memory's
                    await words(pk, [*message_words[0], *talk], message_words[1])
                by_words = None
                progress.mark("words searched")
                vectors = await embedding
                progress.embedded = True
                progress.mark("message embedded")
                queries = [Query(p, v) for p, v in zip(parts, vectors, strict=True)]
                whole = pooled(parts, vectors)
                # The message's own searches first: the dialogue's parts (the reply's among them, never embedded
                # before) can take longer to embed than a deadline leaves, and the message is the most telling.
                async with progress.step():
                    await search_by_meaning(session, tenant_id=tenant_id, memory_pk=pk, vectors=[whole],
                                            parts=queries, into=progress.searched, passages_session=passages_session)
                if talk_embedding is not None:
                    progress.mark("message searched by meaning")
                    # The dialogue's facts only (its passages are those of the message's parts already).
                    talk_vectors = await talk_embedding
                    async with progress.step():
                        await search_by_meaning(session, tenant_id=tenant_id, memory_pk=pk,
                                                vectors=[None, pooled(talk_parts, talk_vectors)], parts=[],
                                                into=progress.searched)
            finally:
                if embedding is not None:
                    embedding.cancel()
                if talk_embedding is not None:
                    talk_embedding.cancel()
                # A query in flight is let finish, so its connection goes back whole (the module's docstring).
                await _finished(by_words)
            candidates = progress.searched.candidates()
            progress.searches_done = True
            progress.mark("meaning searched")
            if prepared is not None:
                # Seed 001: the message finds the walk ready and adds its own search hits, unjudged (the judge
                # may rate a paraphrase every search ranks first as only tangential). The judge's walk is
                # left to the lane; one step across the entities of the best hits, nearest the message, keeps
                # the bridge a two-hop question needs. Order: the best hits, their bridges, the other hits,
                # then the prepared walk's facts (rated against the turn before), so a tight budget trims
                # those first.
                hits = candidates.facts[:self.hits]
                passage_ids = candidates.passages[:self.passage_hits]

                async def facts_read() -> tuple[list[int], dict[int, Any]]:
                    across = await recall_graph.bridges(session, tenant_id=tenant_id, memory_pk=pk,
                                                  fact_ids=hits[:HITS_FIRST], vector=whole, limit=self.bridges)
                    ids = list(dict.fromkeys([*hits[:HITS_FIRST], *across, *hits,
                                              *kept_in_order(progress.kept, rules)]))
                    return ids, await recall_reads.facts_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=ids)

                # The passages are read on their own connection while the bridges are found and the facts read.
                async with progress.step():
                    (fact_ids, facts), passages = await asyncio.gather(facts_read(), recall_reads.passages_by_ids(
                        passages_session, tenant_id=tenant_id, memory_pk=pk, ids=passage_ids))
                return Found(text, ranked_items(fact_ids, facts, passage_ids, passages, candidates.part_of),
                             "prepared")
        # No walk prepared: the message's own hits are walked (a fact they lead to through a bridge is what a
        # two-hop question needs).
        levels, passage_levels = await walk_candidates(
            db, self.judge, self.embedder, self.config, tenant_id=tenant_id, memory_pk=pk, dialogue=dialogue,
            candidates=candidates, known={}, scope=scope, step=progress.step)
        facts = kept_in_order(levels, rules)
        passages = [p for p in candidates.passages if is_kept(passage_levels.get(p, 0), rules)]
        async with progress.step():
            items = await self._items(db, tenant_id, pk, facts, passages, candidates)
        return Found(text, items, "inline")

    async def _items(self, db: Database, tenant_id: str, pk: int, fact_ids: Sequence[int],
                     passage_ids: Sequence[int], candidates: Candidates) -> list[Recalled]:
        async with db.session() as session:
            return await _read_items(session, tenant_id, pk, fact_ids, passage_ids, candidates)


async def _read_items(session: Any, tenant_id: str, pk: int, fact_ids: Sequence[int], passage_ids: Sequence[int],
                      candidates: Candidates) -> list[Recalled]:
    facts = await recall_reads.facts_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=fact_ids)
    passages = await recall_reads.passages_by_ids(session, tenant_id=tenant_id, memory_pk=pk, ids=passage_ids)
    return ranked_items(fact_ids, facts, passage_ids, passages, candidates.part_of)


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


async def walk_candidates(
    db: Database, judge: Judge, embedder: Embedder, config: MechanismConfig, *, tenant_id: str, memory_pk: int,
    dialogue: str,
    candidates: Candidates, known: Mapping[int, int], scope: UsageScope,
    step: Callable[[], contextlib.AbstractAsyncContextManager[None]] = contextlib.nullcontext,
) -> tuple[dict[int, int], dict[int, int]]:
    """The walk over the candidate facts (levels by fact id) and the passages' levels, in a session of its own
    so a deadline that cancels it leaves no other work half done. `step` goes around each query (the hot
    path's `_Progress.step`)."""
    async with db.session() as session:
        async def rate(ids: Sequence[int], via: Sequence[int]) -> list[int]:
            async with step():
                read = await recall_graph.rating_texts(session, tenant_id=tenant_id, memory_pk=memory_pk, ids=ids,
                                                 via=via, dialogue=dialogue)
            prime(embedder, read.vectors)
            return [int(v.level) for v in await judge.rate_relevance(read.context, read.notes, scope=scope)]

        async def near(ids: Sequence[int]) -> list[int]:
            async with step():
                return await recall_graph.neighbours(session, tenant_id=tenant_id, memory_pk=memory_pk, fact_ids=ids)

        levels = await walk(candidates.facts, rate=rate, neighbours=near, rules=config.walk_rules(), known=known)
        passage_levels: dict[int, int] = {}
        if candidates.passages:
            shown = candidates.passages[:config.recall_walk_per_step]
            async with step():
                texts, vectors = await recall_graph.passage_rating_texts(session, tenant_id=tenant_id,
                                                                   memory_pk=memory_pk, ids=shown)
            prime(embedder, vectors)  # a passage is a few hundred tokens: never embed one again for rating
            verdicts = await judge.rate_relevance(dialogue, texts, scope=scope)
            passage_levels = {p: int(v.level) for p, v in zip(shown, verdicts, strict=True)}
    return levels, passage_levels
