"""The lane's graph job: bring written facts into the knowledge graph, and index sealed episodes as passages.

`update_graph` runs after facts are written and after each decorate (where episodes seal). It takes every
fact not yet integrated, oldest first, each in one transaction: resolve its subject and object to entities
(candidates by name and meaning, decided by the judge), judge it against the current facts it may restate or
contradict, apply the graph's rules, and mark it integrated. A worker killed mid-fact rolls that fact back
whole, so the retry decides it again from the same state: nothing is merged twice and no alias is lost. Facts
written before the graph existed have no mark either, so the same job brings them in (backfill).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from temporalio import activity

from activities.heartbeat import heartbeating
from activities.tracing import job_span
from contracts.lane_types import JobInput
from engine.entities import (
    Candidate,
    Resolution,
    describe,
    describe_mention,
    holds_role,
    name_words,
    namesakes,
    resolve,
    role_head,
)
from engine.graph import Claim, Judged, Relation, more_specific, plan_fact
from engine.passages import cut_passages
from providers.embedder import Embedder
from providers.judge import EntityMention, FactClaim, Judge
from providers.usage import UsageScope
from store.db import Database, StoreSession
from store.repositories import graph, lane, memories, search, users, vectors

__all__ = ["GraphActivities", "check_language"]

BATCH = 50


class _Superseded(Exception):  # noqa: N818 - not an error: the fact's integration is undone, nothing is lost
    """The fact was integrated by another attempt, or erased, while this one asked the judge."""
_LANGUAGE = re.compile(r"^[a-z_]{1,63}$")


def check_language(language: str) -> str:
    """A text search configuration name, such as `simple` or `english`."""
    if not _LANGUAGE.match(language):
        raise ValueError(f"search language {language!r} is not a text search configuration name")
    return language


@dataclass
class GraphActivities:
    """Registered bound, beside the lane's: the worker owns the pool, the judge and the embedder."""

    db: Database
    judge: Judge
    embedder: Embedder
    language: str = "simple"

    def all(self) -> list[object]:
        return [self.update_graph]

    @activity.defn
    @heartbeating
    async def update_graph(self, params: JobInput) -> int:
        """Integrate pending facts, then index sealed episodes; returns how many facts and passages were new."""
        memory, event = params.memory, params.event
        with job_span("update_graph", memory.tenant_id, event):
            async with self.db.session() as session:
                pk = await lane.memory_pk(session, tenant_id=memory.tenant_id, memory_id=memory.memory_id)
            if pk is None:
                return 0  # erased meanwhile
            scope = UsageScope(memory.tenant_id, memory.memory_id)
            await self._restore_vectors(memory.tenant_id, pk, scope)
            done = await self._integrate(memory.tenant_id, pk, scope)
            done += await self._index_passages(memory.tenant_id, pk, scope)
            async with self.db.session() as session, session.begin():
                # What the conversation now holds reaches its user's graph (when it has a user).
                done += await users.feed_user_graph(session, tenant_id=memory.tenant_id, memory_pk=pk)
            return done

    async def _integrate(self, tenant_id: str, pk: int, scope: UsageScope) -> int:
        done = 0
        while True:
            async with self.db.session() as session:
                ids = await graph.unintegrated_facts(session, tenant_id=tenant_id, memory_pk=pk, limit=BATCH)
            if not ids:
                return done
            for fact_id in ids:
                done += await self._integrate_one(tenant_id, pk, fact_id, scope)
                activity.heartbeat(done)

    async def _integrate_one(self, tenant_id: str, pk: int, fact_id: int, scope: UsageScope) -> int:
        try:
            async with self.db.session() as session, session.begin():
                return await self._integrate_in(session, tenant_id, pk, fact_id, scope)
        except _Superseded:
            return 0  # rolled back: integrated by an attempt that ran beside this one, or erased

    async def _integrate_in(self, session: StoreSession, tenant_id: str, pk: int, fact_id: int,
                            scope: UsageScope) -> int:
        # The judge is asked with no lock held. Then the memory's row is locked, and only then the fact's, the
        # order in which a forget or a correction of the fact takes them: taking the fact's first, the lane held
        # it while waiting for the memory's row that such an edit held while waiting for the fact (a deadlock),
        # and the edit, with every decorate of the memory behind it, waited out the judge's calls.
        fact = await graph.pending_fact(session, tenant_id=tenant_id, memory_pk=pk, fact_id=fact_id)
        if fact is None:
            return 0
        note_v, subject_v, object_v = await self.embedder.embed([fact.note, fact.subject, fact.object], scope=scope)
        origin = fact.key.split(":", 1)[0]
        subject_id, subject = await self._resolve(session, tenant_id, pk, fact, fact.subject, subject_v, origin,
                                                  scope)
        object_id, obj = await self._resolve(session, tenant_id, pk, fact, fact.object, object_v, origin, scope)
        related = await graph.related_facts(session, tenant_id=tenant_id, memory_pk=pk,
                                            entity_ids=[subject_id, object_id], vector=note_v)
        action = None
        if related:
            new = FactClaim(fact.note, subject, obj, fact.milestone)
            verdicts = await self.judge.judge_contradiction(
                [(FactClaim(r.note, r.subject, r.object, r.milestone), new) for r in related], scope=scope)
            judged = [Judged(Claim(r.key, r.source, r.conflict_with, r.kind, r.settled_by is not None),
                             Relation(v.relation.value), v.score)
                      for r, v in zip(related, verdicts, strict=True)]
            action = plan_fact(Claim(fact.key, fact.source, kind=fact.kind), judged)
        if not await memories.lock_memory_row(session, tenant_id=tenant_id, memory_pk=pk):
            raise _Superseded
        in_force = await graph.lock_pending(session, tenant_id=tenant_id, memory_pk=pk, fact_id=fact.id)
        if in_force is None:
            raise _Superseded
        if action is not None and in_force:  # a claim forgotten or corrected meanwhile retires nothing
            await graph.apply_action(session, tenant_id=tenant_id, memory_pk=pk, fact=fact, action=action)
        await graph.mark_integrated(session, tenant_id=tenant_id, fact_id=fact.id, subject_id=subject_id,
                                    object_id=object_id, vector=note_v, language=self.language, at=fact.at)
        return 1
    async def _resolve(
        self, session: StoreSession, tenant_id: str, pk: int, fact: graph.FactView, name: str, vector: object,
        origin: str, scope: UsageScope,
    ) -> tuple[int, str]:
        """The entity a name denotes, made or found; returns its id and canonical name.

        Among namesakes the mention's own words decide (engine.entities.resolve): a name shared by two or more
        entities that it describes none of becomes an unresolved entity of its own, never a guess."""
        known = await graph.entity_by_alias(session, tenant_id=tenant_id, memory_pk=pk, name=name)
        description = describe_mention(name, fact.note)
        head = role_head(name)
        candidates = await graph.entity_candidates(session, tenant_id=tenant_id, memory_pk=pk, name=name,
                                                   vector=vector, also=[known[0]] if known else [],
                                                   role_words=[head] if head else [],
                                                   # A name already held is only open to its namesakes.
                                                   by_meaning=known is None)
        pool = [Candidate(c.id, (c.name, *c.aliases), describe((c.name, *c.aliases), c.describing))
                for c in candidates]
        # A possible holder of the role is asked about only when the memory does say it holds it.
        kept = [not c.by_role or holds_role(name, p.description) for c, p in zip(candidates, pool, strict=True)]
        candidates = [c for c, keep in zip(candidates, kept, strict=True) if keep]
        pool = [p for p, keep in zip(pool, kept, strict=True) if keep]
        if known is not None and not _open(name, pool):
            return known[0], known[1]
        resolution = Resolution()
        if candidates:
            mention = EntityMention(name=name, context=fact.note, description=description)
            verdicts = await self.judge.judge_same_entity(
                [(mention, EntityMention(c.name, c.context, c.aliases, p.description))
                 for c, p in zip(candidates, pool, strict=True)], scope=scope)
            same = {c.id: v.score for c, v in zip(candidates, verdicts, strict=True) if v.same}
            resolution = resolve(name, description, pool, same)
        if resolution.unresolved:
            entity_id = await graph.create_entity(session, tenant_id=tenant_id, memory_pk=pk, name=name,
                                                  vector=vector, origin=origin, at=fact.at, fact_key=fact.key,
                                                  unresolved=True)
            return entity_id, name
        if resolution.entity_id is not None:
            entity = next(c for c in candidates if c.id == resolution.entity_id)
            await graph.add_alias(session, tenant_id=tenant_id, memory_pk=pk, entity_id=entity.id,
                                  name=name, fact_key=fact.key, score=resolution.score, at=fact.at)
            canonical = entity.name
            # Canonical: the name the memory's facts already use, unless every name so far came from this
            # very note call, where the most specific one wins; a role never replaces a person's name.
            if entity.origin == origin and (name_words(name) or not name_words(entity.name)) and \
                    (better := more_specific(entity.name, name)) != entity.name:
                await graph.rename_entity(session, tenant_id=tenant_id, memory_pk=pk,
                                          entity_id=entity.id, name=better, vector=vector)
                canonical = better
            return entity.id, canonical
        entity_id = await graph.create_entity(session, tenant_id=tenant_id, memory_pk=pk, name=name,
                                              vector=vector, origin=origin, at=fact.at, fact_key=fact.key)
        return entity_id, name

    async def _restore_vectors(self, tenant_id: str, pk: int, scope: UsageScope) -> None:
        """Embed what an import brought without its vector (entities first: integration compares with them)."""
        for table in ("entities", "facts", "passages"):
            while True:
                async with self.db.session() as session:
                    rows = await vectors.missing_vectors(session, tenant_id=tenant_id, memory_pk=pk, table=table,
                                                         limit=BATCH)
                if not rows:
                    break
                embedded = await self.embedder.embed([text for _, text in rows], scope=scope)
                async with self.db.session() as session, session.begin():
                    await vectors.set_vectors(session, tenant_id=tenant_id, table=table,
                                              ids=[i for i, _ in rows], vectors=embedded,
                                              language=self.language)
                activity.heartbeat(len(rows))

    async def _index_passages(self, tenant_id: str, pk: int, scope: UsageScope) -> int:
        async with self.db.session() as session:
            pending = await search.episodes_to_index(session, tenant_id=tenant_id, memory_pk=pk)
        added = 0
        for key, first_seq, last_seq in pending:
            async with self.db.session() as session:
                messages = await lane.stored_messages(session, tenant_id=tenant_id, memory_pk=pk,
                                                      first_seq=first_seq, last_seq=last_seq)
            passages = cut_passages(messages)
            if not passages:
                continue
            vectors = await self.embedder.embed([p.text for p in passages], scope=scope)
            at: datetime = messages[-1].at
            async with self.db.session() as session, session.begin():
                added += await search.insert_passages(session, tenant_id=tenant_id, memory_pk=pk, episode_key=key,
                                                      passages=passages, vectors=vectors, at=at,
                                                      language=self.language)
            activity.heartbeat(added)
        return added


def _open(name: str, pool: list[Candidate]) -> bool:
    """A name its alias alone cannot settle: two or more entities share it, or it is a role someone holds."""
    if len(namesakes(name, pool)) >= 2:
        return True
    return not name_words(name) and any(any(name_words(n) for n in c.names) and holds_role(name, c.description)
                                        for c in pool)

