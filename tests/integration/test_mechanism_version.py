"""The memory's mechanism version moves with every change to its episodes, facts or traces (the gateway's
cache of them depends on it) and with nothing else."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import select, text

from engine.cutting import covered_prefix
from engine.episodes import Episode, EpisodeState, Transition
from engine.facts import Fact
from engine.traces import Trace
from store.db import Database
from store.models import MemoryRow
from store.repositories import episode_store, fact_store, memories, note_store, tenants, trace_store
from tests.integration.held_lane_write import FIRST, NOW, HeldLaneWrite


async def _new_memory(db: Database, memory_id: str) -> tuple[str, int]:
    """A memory of a new tenant: the tenant's id and the memory's pk."""
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"{memory_id}-{uuid.uuid4().hex[:8]}")
        memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id=memory_id)
    return tenant.id, memory.id


async def _version(db: Database, memory_pk: int) -> int:
    async with db.session() as session:
        query = select(MemoryRow.mechanism_version).where(MemoryRow.id == memory_pk)
        return (await session.execute(query)).scalar_one()


async def test_every_change_the_engine_reads_moves_the_version_and_nothing_else_does(db: Database) -> None:
    tenant_id, pk = await _new_memory(db, "versioned")
    seen = [await _version(db, pk)]

    async def step(write) -> int:  # type: ignore[no-untyped-def]
        async with db.session() as session, session.begin():
            await memories.lock_memory(session, tenant_id=tenant_id, memory_id="versioned", create=False)
            await write(session)
        seen.append(await _version(db, pk))
        return seen[-1] - seen[-2]

    assert await step(lambda s: episode_store.save_cut(s, tenant_id=tenant_id, memory_pk=pk, episodes=[FIRST],
                                                     at=NOW)) > 0
    # The same cut again inserts nothing: nothing moves.
    assert await step(lambda s: episode_store.save_cut(s, tenant_id=tenant_id, memory_pk=pk, episodes=[FIRST],
                                                     at=NOW)) == 0
    assert await step(lambda s: trace_store.add_traces(s, tenant_id=tenant_id, memory_pk=pk, traces=[
        Trace(at=NOW, score=1.0, counted=True, episode_id="ep-1-2", fact_id="f-1")])) > 0
    leaving = Episode(**{**FIRST.__dict__, "state": EpisodeState.LEAVING})
    assert await step(lambda s: episode_store.apply_transitions(
        s, tenant_id=tenant_id, memory_pk=pk, episodes=[leaving],
        transitions=[Transition("ep-1-2", EpisodeState.LIVE, EpisodeState.LEAVING, "fade")], at=NOW)) > 0
    # A note ask's counter is not something the engine reads.
    assert await step(lambda s: note_store.record_note_ask(s, tenant_id=tenant_id, memory_pk=pk,
                                                          episode_keys=["ep-1-2"], at=NOW)) == 0

    async def note(session) -> None:  # type: ignore[no-untyped-def]
        fact_store.add_facts(session, tenant_id=tenant_id, memory_pk=pk, note_call_id=None, facts=[
            Fact(id="f1", note="Dana owns the pricing page.", subject="Dana", object="pricing page",
                 milestone=False, episode_ids=("ep-1-2",), at=NOW, first_turn=1, last_turn=1)])
        await session.flush()
        await note_store.acknowledge(session, tenant_id=tenant_id, episodes=await note_store.awaiting_note(
            session, tenant_id=tenant_id, memory_pk=pk), at=NOW)

    assert await step(note) > 0  # the fact, and the episode now has its facts


async def test_a_reader_holding_a_version_reads_exactly_the_rows_changed_since(db: Database) -> None:
    """What the gateway relies on to read only what changed (service/memory_cache.py): every row a change writes is
    stamped after the version it held, and nothing else is."""
    tenant_id, pk = await _new_memory(db, "stamped")
    second = Episode(**{**FIRST.__dict__, "id": "ep-3-4", "first_seq": 3, "last_seq": 4})

    async def changed_since(version: int) -> tuple[list[str], int]:
        async with db.session() as session:
            episodes = await episode_store.load_episodes(session, tenant_id=tenant_id, memory_pk=pk,
                                                         changed_after=version)
            traces = await trace_store.load_traces(session, tenant_id=tenant_id, memory_pk=pk, changed_after=version)
        return [e.id for e in episodes], len(traces)

    before = await _version(db, pk)
    async with db.session() as session, session.begin():
        await episode_store.save_cut(session, tenant_id=tenant_id, memory_pk=pk, episodes=[FIRST, second], at=NOW)
    held = await _version(db, pk)
    assert await changed_since(before) == (["ep-1-2", "ep-3-4"], 2)  # the episodes and their encoding traces
    assert await changed_since(held) == ([], 0)

    leaving = Episode(**{**second.__dict__, "state": EpisodeState.LEAVING})
    async with db.session() as session, session.begin():
        await memories.lock_memory(session, tenant_id=tenant_id, memory_id="stamped", create=False)
        await episode_store.apply_transitions(
            session, tenant_id=tenant_id, memory_pk=pk, episodes=[leaving],
            transitions=[Transition("ep-3-4", EpisodeState.LIVE, EpisodeState.LEAVING, "fade")], at=NOW)
        await trace_store.add_traces(session, tenant_id=tenant_id, memory_pk=pk, traces=[
            Trace(at=NOW, score=0.5, counted=True, episode_id="ep-1-2")])
    assert await changed_since(held) == (["ep-3-4"], 1)
    assert await changed_since(await _version(db, pk)) == ([], 0)


async def test_a_change_under_the_memory_lock_never_waits_for_a_write_that_only_adds_to_the_memory(
    db: Database
) -> None:
    """A lane transaction adding a passage holds a key-share lock on the memory's row (its foreign key) until it
    commits. A decorate holding the memory's lock stamps the episodes it cuts: that stamp goes through at once,
    and the passage's transaction then stamps its own change after it."""
    tenant_id, pk = await _new_memory(db, "shared")
    write = HeldLaneWrite(db, tenant_id=tenant_id, memory_pk=pk)
    lane = asyncio.create_task(write.run())
    await write.added.wait()
    try:
        async with db.session() as session, session.begin():
            # Waiting for the passage's transaction would wait for ever: it goes on only once the cut is in.
            await session.execute(text("SET LOCAL lock_timeout = '5s'"))
            await memories.lock_memory(session, tenant_id=tenant_id, memory_id="shared", create=False)
            await episode_store.save_cut(session, tenant_id=tenant_id, memory_pk=pk, episodes=[FIRST], at=NOW)
    finally:
        write.go_on.set()
        await lane
    async with db.session() as session:
        traces = await trace_store.load_traces(session, tenant_id=tenant_id, memory_pk=pk)
    assert sorted(t.score for t in traces) == [0.5, 1.0]  # the cut's encoding trace, then the lane's


@pytest.mark.parametrize("spans", [[], [(2, 3)], [(1, 2), (3, 5), (7, 9)], [(1, 4), (5, 6), (7, 8)],
                                   [(3, 4), (1, 2), (9, 9), (5, 8)]])
async def test_the_covered_prefix_in_postgres_is_the_engines(db: Database, spans: list[tuple[int, int]]) -> None:
    async with db.session() as session, session.begin():
        tenant = await tenants.create_tenant(session, name=f"covered-{uuid.uuid4().hex[:8]}")
        memory = await memories.lock_memory(session, tenant_id=tenant.id, memory_id="covered")
        episodes = [Episode(id=f"ep-{a}-{b}", state=EpisodeState.FORGOTTEN if a % 2 else EpisodeState.LIVE,
                            first_seq=a, last_seq=b, first_turn=a, last_turn=b, tokens=1, at=NOW) for a, b in spans]
        await episode_store.save_cut(session, tenant_id=tenant.id, memory_pk=memory.id, episodes=episodes, at=NOW)
        assert await episode_store.covered_prefix(session, tenant_id=tenant.id, memory_pk=memory.id) == \
            covered_prefix(episodes)
