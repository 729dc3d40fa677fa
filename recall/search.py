"""A new user message's searches in the hot path: the memory's first read, the searches by words and by
meaning for the message and its recent conversation, each ranking kept in the find's `Progress` as soon as it
is done, so a deadline that cuts the searching short still has the hits of those done.

The message is embedded from the start, in a thread, while the memory is read and the searches that need no
vectors run; a memory's pk as last read lets the message's search by words run beside the first read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.messages import item_kind
from engine.recall.parts import split_parts
from engine.recall.walk import is_kept
from engine.texts import item_text
from providers.embedder import Embedder, pooled
from providers.usage import UsageScope
from recall.config import RecallConfig
from recall.deadline import Progress, finished
from store.repositories import recall_reads
from store.repositories.recall_search import Query, Searched, search_by_meaning, search_by_words

__all__ = ["MessageSearch", "Searches", "message_dialogue"]

# A memory, by tenant and memory id.
Key = tuple[str, str]


def message_dialogue(history: Sequence[Mapping[str, Any]], config: RecallConfig) -> str:
    """The recent conversation searched with the message, the message last."""
    lines = [f"{m.get('role') or m.get('type') or 'item'}: {item_text(m)}"
             for m in history[-config.message_dialogue_items:] if item_kind(m) != "instruction"]
    return "\n".join(lines)[-config.message_dialogue_chars:]


@dataclass(frozen=True)
class Searches:
    """What the searches found, and what the find goes on with: the memory's pk, the lane's prepared walk
    (None: none ready), the recent conversation and the message's pooled vector."""

    pk: int
    prepared: dict[int, int] | None
    dialogue: str
    whole: Any


class MessageSearch:
    """One message's searches, on the find's two connections (the second reads passages beside the graph)."""

    def __init__(self, embedder: Embedder, config: RecallConfig, *, tenant_id: str, memory_id: str, text: str,
                 progress: Progress, barren: MutableMapping[Key, bool], pks: MutableMapping[Key, int],
                 talk_by_meaning: bool = True) -> None:
        self.embedder, self.config, self.text, self.progress = embedder, config, text, progress
        self.tenant_id, self.memory_id, self.key = tenant_id, memory_id, (tenant_id, memory_id)
        self.barren, self.pks = barren, pks
        # Whether the recent conversation is searched by meaning when no walk is prepared (its parts embedded):
        # not for a user's graph, searched beside the conversation's own recall, which embeds them already.
        self.talk_by_meaning = talk_by_meaning
        self.scope = UsageScope(tenant_id, memory_id)
        self.parts = split_parts(text)
        # The parts are searched on their own only when there is more than one.
        self.word_parts = self.parts if len(self.parts) > 1 else []
        # The vector of the whole is pooled from its parts': the parts are searched anyway, and a sentence the
        # conversation repeats is embedded once. A memory last seen barren waits for its first read.
        self.embedding = None if self.key in barren else self._embed(self.parts)
        self.talk_parts: list[str] = []
        self.talk_embedding: asyncio.Future[Any] | None = None
        self.by_words: asyncio.Future[None] | None = None
        self.known_pk: int | None = None
        self.session: Any = None
        self.passages_session: Any = None

    def _embed(self, texts: list[str]) -> asyncio.Future[Any]:
        return asyncio.ensure_future(self.embedder.embed(texts, scope=self.scope))

    async def run(self, session: Any, passages_session: Any, history: Sequence[Mapping[str, Any]]
                  ) -> Searches | None:
        """Every search, its rankings in the find's progress; None when the memory holds nothing to recall."""
        self.session, self.passages_session = session, passages_session
        try:
            start = await self._read_memory()
            if start is None:
                return None
            dialogue = message_dialogue(history, self.config)
            talk = self._talk(dialogue, history, prepared=start.prepared is not None or not self.talk_by_meaning)
            await self._search_by_words(start.pk, talk)
            whole = await self._search_by_meaning(start.pk)
        finally:
            if self.embedding is not None:
                self.embedding.cancel()
            if self.talk_embedding is not None:
                self.talk_embedding.cancel()
            # A query in flight is let finish, so its connection goes back whole (`recall.deadline`).
            await finished(self.by_words)
        self.progress.searches_done = True
        self.progress.mark("meaning searched")
        return Searches(start.pk, start.prepared, dialogue, whole)

    async def _words(self, pk: int, texts: list[str], parts: list[str], on: Any = None,
                     into: Searched | None = None, *, own: bool = True) -> None:
        async with self.progress.step():
            await search_by_words(self.passages_session if on is None else on, tenant_id=self.tenant_id,
                                  memory_pk=pk, texts=texts, parts=parts, language=self.config.language,
                                  into=into or self.progress.searched, own=own)

    async def _read_memory(self) -> recall_reads.RecallStart | None:
        """The memory's first read, the message's search by words beside it when its pk is known."""
        self.known_pk = self.pks.get(self.key) if self.embedding is not None else None
        if self.known_pk is not None:
            # On the other connection, so both start their transactions at once too.
            self.by_words = asyncio.ensure_future(self._words(self.known_pk, [self.text], self.word_parts))
        async with self.progress.step():
            start = await recall_reads.recall_start(self.session, tenant_id=self.tenant_id, memory_id=self.memory_id)
        if start is None or not start.recallable:
            self.barren[self.key] = True
            return None
        self.pks[self.key] = start.pk
        if self.embedding is None:
            self.barren.pop(self.key, None)
            self.embedding = self._embed(self.parts)
        self.progress.pk = start.pk
        self.progress.mark("memory read")
        rules = self.config.walk_rules()
        self.progress.kept = {k: v for k, v in (start.prepared or {}).items() if is_kept(v, rules)}
        return start

    def _talk(self, dialogue: str, history: Sequence[Mapping[str, Any]], *, prepared: bool) -> list[str]:
        """The recent conversation to search, its parts embedded from now on; none when the request holds only
        the new message (it would repeat its searches). With a walk prepared it is searched by words only: the
        lane found that walk from the turn before by words and meaning, and the words (an identifier named a
        moment ago) cost one more query in a statement the message runs anyway, where embedding the dialogue
        would cost the turn."""
        recent = history[-self.config.message_dialogue_items:]
        if sum(item_kind(m) != "instruction" for m in recent) <= 1:
            return []
        if prepared:
            return [dialogue]
        # The dialogue's parts are what the walk's judge reads next (so they are cached for it).
        self.talk_parts = split_parts(dialogue)
        if self.talk_parts:
            self.talk_embedding = self._embed(self.talk_parts)
        return [dialogue]

    async def _search_by_words(self, pk: int, talk: list[str]) -> None:
        if self.by_words is not None and self.known_pk == pk:
            # The dialogue's own search on the first connection, while the message's may still run; its ranking
            # goes after the message's, as one statement would have put it (fusion breaks ties by order).
            talk_words = Searched()
            await asyncio.gather(self.by_words, *([self._words(pk, talk, [], self.session, talk_words, own=False)]
                                                  if talk else []))
            self.progress.searched.broad.extend(talk_words.broad)
        else:
            await finished(self.by_words)
            self.progress.searched = Searched()  # a stale pk's search found nothing of this memory's
            await self._words(pk, [self.text, *talk], self.word_parts)
        self.by_words = None
        self.progress.mark("words searched")

    async def _search_by_meaning(self, pk: int) -> Any:
        """The searches by meaning; returns the message's pooled vector (the bridges are found nearest it)."""
        assert self.embedding is not None  # started by the memory's first read at the latest
        vectors = await self.embedding
        self.progress.embedded = True
        self.progress.mark("message embedded")
        queries = [Query(p, v) for p, v in zip(self.parts, vectors, strict=True)]
        whole = pooled(self.parts, vectors)
        # The message's own searches first: the dialogue's parts (the reply's among them, never embedded before)
        # can take longer to embed than a deadline leaves, and the message is the most telling.
        async with self.progress.step():
            await search_by_meaning(self.session, tenant_id=self.tenant_id, memory_pk=pk, vectors=[whole],
                                    parts=queries, into=self.progress.searched,
                                    passages_session=self.passages_session)
        if self.talk_embedding is not None:
            self.progress.mark("message searched by meaning")
            # The dialogue's facts only (its passages are those of the message's parts already).
            talk_vectors = await self.talk_embedding
            async with self.progress.step():
                await search_by_meaning(self.session, tenant_id=self.tenant_id, memory_pk=pk,
                                        vectors=[None, pooled(self.talk_parts, talk_vectors)], parts=[],
                                        into=self.progress.searched)
        return whole
