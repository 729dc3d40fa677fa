"""Recall through the gateway and the lane, on facts written straight into the memories' graphs: the inline
walk and then the prepared one, a tool loop reusing the turn's block, distill rewriting and removing blocks,
and no memory's recall ever reading another memory's graph (same tenant, or another tenant)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import httpx
from sqlalchemy import event, text

from config.settings import Settings
from engine.blocks.recall_block import CLOSE, OPEN
from providers.factory import make_embedder
from providers.judge import RelevanceVerdict
from providers.local_judge import LocalJudge
from providers.usage import UsageScope
from recall.config import RecallConfig
from recall.find import Recaller
from store.db import Database
from tests.integration.graph.graph_support import write_note
from tests.integration.recall.talk import Talk, auth, recall_blocks
from tests.integration.workflows.lane_support import lane_idle

STAGING = [
    {"note": "The staging server deploy code is ZX-4471.", "subject": "staging server", "object": "ZX-4471"},
    {"note": "Priya owns the staging server.", "subject": "Priya", "object": "staging server"},
    {"note": "The marketing offsite is in Lisbon.", "subject": "marketing offsite", "object": "Lisbon"},
    {"note": "The QA rota starts on Monday.", "subject": "QA rota", "object": "Monday"},
    {"note": "Priya is on leave until March 3.", "subject": "Priya", "object": "leave"},
    {"note": "The marketing offsite budget is 40,000 EUR.", "subject": "marketing offsite", "object": "budget"},
]
EMBEDDER = make_embedder()
Q1 = "What is the deploy code for the staging server again?"
Q2 = "How much is the marketing offsite budget?"


class _StuckJudge(LocalJudge):
    """A judge whose ratings never come back in time (a remote model on a slow day)."""

    async def rate_relevance(self, dialogue: str, facts: Sequence[str], *, scope: UsageScope | None = None
                             ) -> list[RelevanceVerdict]:
        await asyncio.sleep(60)
        return await super().rate_relevance(dialogue, facts, scope=scope)


class _StuckEmbedder:
    """An embedder whose vectors never come back in time (a remote embedding service on a slow day)."""

    model_id = EMBEDDER.model_id
    dimensions = EMBEDDER.dimensions

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> Any:
        await asyncio.sleep(60)
        return await EMBEDDER.embed(texts, scope=scope)


async def _state(http: httpx.AsyncClient, key: str, memory_id: str) -> dict[str, Any]:
    response = await http.get(f"/v1/memories/{memory_id}", headers=auth(key))
    assert response.status_code == 200, response.text
    return response.json()


def _before(request: dict[str, Any], user_text: str) -> str | None:
    """The recall block standing right before the user message with this text, if any."""
    messages = request["messages"]
    index = next(i for i, m in enumerate(messages) if m.get("role") == "user" and m["content"] == user_text)
    previous = messages[index - 1]
    return previous["content"] if str(previous.get("content", "")).startswith(OPEN) else None


async def test_recall_walks_reuses_distills_and_stays_in_its_memory(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], other_tenant: tuple[str, str], db: Database
) -> None:
    tenant_id, key = tenant
    other_id, other_key = other_tenant
    talk = Talk(recall_http, key, "rc")
    first = await talk.turn("Hello, let's get started on the launch plan.")
    assert recall_blocks(first["request"]) == []  # nothing held yet: no block at all
    # Another memory of this tenant, and another tenant's memory of the same name, hold rival codes.
    await Talk(recall_http, key, "rc-other").turn("Hello.")
    await Talk(recall_http, other_key, "rc").turn("Hello.")
    await lane_idle(db, tenant_id)
    now = datetime.now(UTC)
    await write_note(db, tenant_id, "rc", "notes-rc", STAGING, now)
    await write_note(db, tenant_id, "rc-other", "notes-other", [
        {"note": "The staging server deploy code is QQ-9999.", "subject": "staging server", "object": "QQ-9999"}],
        now)
    await write_note(db, other_id, "rc", "notes-foreign", [
        {"note": "The staging server deploy code is TT-1111.", "subject": "staging server", "object": "TT-1111"}],
        now)
    await lane_idle(db, tenant_id)
    await lane_idle(db, other_id)

    # Turn 2: nothing was prepared (the only reply came before any fact), so the walk runs inline.
    talk.transcript.append({"role": "user", "content": Q1})
    asked = await talk.decorate()
    [(index, block)] = recall_blocks(asked["request"])
    assert asked["request"]["messages"][index + 1] == {"role": "user", "content": Q1}
    assert block.splitlines()[0] == OPEN and block.splitlines()[-1] == CLOSE
    assert "ZX-4471" in block and "QQ-9999" not in block and "TT-1111" not in block, block
    # A walk that cannot finish by the deadline: the search hits are used as they are.
    history = [{"role": "user", "content": Q1}]
    # Long enough for the searches on a loaded test machine; the judge never answers, so the walk never ends.
    hurried = Recaller(embedder=EMBEDDER, judge=_StuckJudge(EMBEDDER), config=RecallConfig(deadline_seconds=6))
    found = await hurried.find(db, tenant_id=tenant_id, memory_id="rc", history=history)
    assert found is not None and found.provenance == "hits"
    assert any("ZX-4471" in getattr(item, "note", "") for item in found.items)
    # The deadline bounds all of recall, searches included: with none at all, nothing is found and no block.
    instant = Recaller(embedder=EMBEDDER, judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=0))
    assert await instant.find(db, tenant_id=tenant_id, memory_id="rc", history=history) is None
    # An embedder that never answers: the searches by words still run, and recall returns at its deadline
    # with what they found (the searches cut short) or nothing, instead of waiting for the embedder.
    stuck = Recaller(embedder=_StuckEmbedder(), judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=1))
    cut = await asyncio.wait_for(stuck.find(db, tenant_id=tenant_id, memory_id="rc", history=history), 30)
    assert cut is None or cut.provenance == "partial"
    # A tool loop inside the turn carries the same block, and stores no second one.
    await talk.report(asked, "Checking the records.", tool=True)
    looped = await talk.decorate()
    assert recall_blocks(looped["request"])[0][1] == block
    await talk.report(looped, "The deploy code is ZX-4471.")
    [placed] = (await _state(recall_http, key, "rc"))["recall_blocks"]
    assert (placed["turn"], placed["provenance"], placed["placed"]) == (2, "inline", block)
    assert placed["distilled"] is None and not placed["removed"]

    # Turn 3: the lane prepared a walk after the reply; the new message finds it ready.
    await lane_idle(db, tenant_id)
    second = await talk.turn(Q2, "The budget is 40,000 EUR.")
    prepared = _before(second["request"], Q2)
    assert prepared is not None and "40,000 EUR" in prepared, prepared
    # Facts still in view in turn 2's block are not recalled again.
    assert "ZX-4471" not in prepared, prepared
    await talk.turn("Thanks, that's all for now.")
    await lane_idle(db, tenant_id)
    blocks = {b["turn"]: b for b in (await _state(recall_http, key, "rc"))["recall_blocks"]}
    assert blocks[3]["provenance"] == "prepared"

    # Distill reread turn 2's block once turn 3 came: the code the reply said, and the owner the turn never
    # used, are gone; nothing was left, so the block is removed.
    assert "Priya owns the staging server." in blocks[2]["placed"]
    assert blocks[2]["removed"] and blocks[2]["distilled"] is None and blocks[2]["distilled_fact_ids"] == []
    # Turn 3's block, distilled when turn 4 came: the budget the reply said is gone; what is left (if
    # anything) is what later requests carry before Q2, in place of the block as first placed.
    third = blocks[3]
    assert third["distilled_at"] is not None and "40,000 EUR" not in (third["distilled"] or "")
    assert set(third["distilled_fact_ids"]) < set(third["fact_ids"])
    follow = await talk.turn("One more thing: is the QA rota settled?")
    # Later requests carry each block as distilled: nothing before Q1, turn 3's rewrite (or nothing) before Q2.
    assert _before(follow["request"], Q1) is None
    assert _before(follow["request"], Q2) == third["distilled"]


class _CountingEmbedder:
    """The shared embedder, counting the texts it is asked for."""

    model_id = EMBEDDER.model_id
    dimensions = EMBEDDER.dimensions

    def __init__(self) -> None:
        self.texts = 0

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> Any:
        self.texts += len(texts)
        return await EMBEDDER.embed(texts, scope=scope)


async def test_a_memory_with_nothing_to_recall_does_not_embed_each_message(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    """Embedding a message costs a core for milliseconds, and runs on in its thread when its task is cancelled:
    once a memory is known to hold nothing recall could find, its messages are embedded only when it does."""
    tenant_id, key = tenant
    await Talk(recall_http, key, "young").turn("Hello, let's get started on the launch plan.")
    await lane_idle(db, tenant_id)
    counting = _CountingEmbedder()
    recaller = Recaller(embedder=counting, judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=30))
    history = [{"role": "user", "content": Q1}]
    assert await recaller.find(db, tenant_id=tenant_id, memory_id="young", history=history) is None
    seen = counting.texts
    for _ in range(3):
        assert await recaller.find(db, tenant_id=tenant_id, memory_id="young", history=history) is None
    assert counting.texts == seen
    # Once the memory holds a fact, the next message is embedded and the fact found.
    await write_note(db, tenant_id, "young", "notes-young", STAGING[:1], datetime.now(UTC))
    await lane_idle(db, tenant_id)
    found = await recaller.find(db, tenant_id=tenant_id, memory_id="young", history=history)
    assert counting.texts > seen
    assert found is not None and any("ZX-4471" in getattr(item, "note", "") for item in found.items), found


async def test_a_find_left_by_its_deadline_gives_its_connections_back(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database, settings: Settings
) -> None:
    """A query cancelled in flight costs its connection: the pool drops it and the next call pays for a new one
    (a backend, the driver's type lookups, every statement prepared again). Recall past its deadline answers at
    once and leaves its query to finish instead."""
    tenant_id, key = tenant
    await Talk(recall_http, key, "held").turn("Hello, let's get started on the launch plan.")
    own = Database(settings.database.url, pool_size=2)
    dropped: list[object] = []
    event.listen(own.engine.sync_engine, "invalidate", lambda *args: dropped.append(args))
    recaller = Recaller(embedder=EMBEDDER, judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=0.3))
    try:
        async with db.session() as locker, locker.begin():
            # Recall's first read waits behind this lock until well past its deadline.
            await locker.execute(text("LOCK TABLE recall_walks IN ACCESS EXCLUSIVE MODE"))
            # Answered at the deadline: waiting for its read would wait for this lock, held until it answers.
            assert await asyncio.wait_for(recaller.find(own, tenant_id=tenant_id, memory_id="held",
                                                        history=[{"role": "user", "content": Q1}]), 20) is None
            assert own.engine.pool.checkedout() > 0  # the read still waits on the lock
        for _ in range(100):  # the lock is gone: the read ends, and the find with it
            if own.engine.pool.checkedout() == 0:
                break
            await asyncio.sleep(0.05)
        assert own.engine.pool.checkedout() == 0
        assert dropped == []
    finally:
        await own.dispose()


async def test_a_memory_erased_and_made_again_is_searched_as_the_new_one(
    recall_http: httpx.AsyncClient, tenant: tuple[str, str], db: Database
) -> None:
    """Recall keeps each memory's pk to search by words beside its first read: the same id erased and made
    again is another memory, whose fact only the search by words finds (an identifier, in a sentence far in
    meaning from the question) is found as a recaller that never knew the old memory finds it."""
    tenant_id, key = tenant
    await Talk(recall_http, key, "again").turn("Hello, let's get started on the launch plan.")
    await lane_idle(db, tenant_id)
    await write_note(db, tenant_id, "again", "notes-old", STAGING[:1], datetime.now(UTC))
    await lane_idle(db, tenant_id)
    knowing = Recaller(embedder=EMBEDDER, judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=30))
    old = await knowing.find(db, tenant_id=tenant_id, memory_id="again", history=[{"role": "user", "content": Q1}])
    assert old is not None and "ZX-4471" in " ".join(getattr(i, "note", "") for i in old.items)
    old_pk = knowing.pks[tenant_id, "again"]

    assert (await recall_http.delete("/v1/memories/again", headers=auth(key))).status_code == 200
    remade = Talk(recall_http, key, "again")
    await remade.turn("Hello again, a new plan.")
    await lane_idle(db, tenant_id)
    # Two dozen facts nearer the question in meaning than the one it names.
    near = [{"note": f"The {place} server deploy code is QA-{n}.", "subject": f"{place} server", "object": f"QA-{n}"}
            for n, place in enumerate(["staging", "billing", "search", "mobile", "payments", "reporting"] * 4)]
    named = {"note": "Order ZX-8080 is the garden bench delivery.", "subject": "order ZX-8080",
             "object": "garden bench"}
    await write_note(db, tenant_id, "again", "notes-new", [*near, named], datetime.now(UTC))
    await lane_idle(db, tenant_id)
    # A reply after the facts: the lane prepares the next message's walk, which the message's hits join unjudged.
    await remade.turn("Let's review the servers first.")
    await lane_idle(db, tenant_id)
    question = [{"role": "user", "content": "Is ZX-8080 still the deploy code we use?"}]
    found = await knowing.find(db, tenant_id=tenant_id, memory_id="again", history=question)
    assert knowing.pks[tenant_id, "again"] != old_pk
    fresh = Recaller(embedder=EMBEDDER, judge=LocalJudge(EMBEDDER), config=RecallConfig(deadline_seconds=30))
    expected = await fresh.find(db, tenant_id=tenant_id, memory_id="again", history=question)
    assert found is not None and expected is not None and found.provenance == "prepared"
    notes = [getattr(i, "note", "") for i in found.items]
    assert named["note"] in notes, notes
    assert notes == [getattr(i, "note", "") for i in expected.items]
