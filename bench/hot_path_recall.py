"""What recall costs a decorate: decorate p50/p99 in-process (no HTTP, no worker) at `--facts` facts in the
graph, recall off against recall on with the lane's walk prepared for every turn, and recall's own time
(`Recaller.find`) against its deadline (`LETHE_RECALL_INLINE_DEADLINE_MS`), with which way each turn went
(provenance: prepared, inline, hits, partial, or none).

Two memories alike but for recall: the same stored history and as many facts, each memory its own (integrated,
linked to entities, indexed by words and by their notes' embeddings), kept against archived episodes as most facts
of a long memory are. After each reply on the recall memory, the lane's own `prepare_recall` runs (in-process,
through Temporal's activity test environment) so the next message finds its walk ready, as it does when the lane
keeps up.

    .venv/bin/python bench/hot_path_recall.py [--facts 10000] [--size 1000] [--samples 120] [--deadline-ms 150]

Prints both and the ratio; writes bench/results/hot_path_recall.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.append(str(Path(__file__).resolve().parent))  # after the root: bench/providers.py is not the package

from hot_path import import_history, reply_message, step_message  # noqa: E402
from sqlalchemy import text  # noqa: E402
from stack import embedded_database, write_result  # noqa: E402
from stats import summary  # noqa: E402
from temporalio.testing import ActivityEnvironment  # noqa: E402

from activities.recall import RecallActivities  # noqa: E402
from config.mechanism import mechanism_config  # noqa: E402
from config.settings import Settings  # noqa: E402
from contracts.lane_types import EventRef, JobInput, MemoryRef  # noqa: E402
from providers.factory import make_embedder, make_token_counter  # noqa: E402
from providers.local_judge import LocalJudge  # noqa: E402
from recall.config import RecallConfig  # noqa: E402
from recall.find import Recaller  # noqa: E402
from service.clock import Clock  # noqa: E402
from service.context import HotPath  # noqa: E402
from service.decorate import decorate  # noqa: E402
from service.report import report  # noqa: E402
from store.db import Database, bind_tenant  # noqa: E402
from store.repositories import tenants  # noqa: E402

PEOPLE = ["Dana", "Priya", "Tomasz", "Ingrid", "Kofi", "Mireille", "Oskar", "Yuki", "Rafael", "Leila"]
THINGS = ["checkout migration", "search reindex", "billing rewrite", "warehouse sync", "fraud scoring",
          "invoice export", "loyalty ledger", "partner gateway", "pricing experiment", "retention cleanup"]


class Timed:
    """The recaller, timed: each find's wall time and what it returned."""

    def __init__(self, recaller: Recaller) -> None:
        self.recaller = recaller
        self.times: list[float] = []
        self.provenance: dict[str, int] = {}

    async def find(self, db: Database, **kwargs: Any) -> Any:
        started = time.perf_counter()
        found = await self.recaller.find(db, **kwargs)
        self.times.append((time.perf_counter() - started) * 1000)
        name = found.provenance if found is not None else "none"
        self.provenance[name] = self.provenance.get(name, 0) + 1
        return found


async def _turn(ctx: HotPath, tenant: str, memory_id: str, history: list[dict[str, Any]], turn: int) -> float:
    started = time.perf_counter()
    answer = json.loads(await decorate(ctx, tenant_id=tenant, memory_id=memory_id, body={
        "model": "gpt-4o-mini", "messages": history}, clock=Clock(datetime.now(UTC)), idempotency_key=None))
    decorate_ms = (time.perf_counter() - started) * 1000
    await report(ctx, tenant_id=tenant, memory_id=memory_id, clock=Clock(datetime.now(UTC)), idempotency_key=None,
                 body={"decorate_id": answer["decorate_id"], "response": reply_message(turn, answer)})
    return decorate_ms


async def _grow(ctx: HotPath, tenant: str, memory_id: str, size: int) -> int:
    stored, turn = 0, 1
    while stored < size:
        history, turn = import_history(turn, min(25, max(1, (size - stored) // 2)))
        await _turn(ctx, tenant, memory_id, history, turn)
        stored += len(history) + 1
    return turn


# What the bench's facts say besides their person and project: enough kinds of sentence that their embeddings
# spread as a real memory's notes do, in clusters of related meaning.
_DOINGS = ["moved the deadline for", "asked for a review of", "found a regression in", "wrote the runbook for",
           "signed off on", "is blocked on the vendor for", "paired with support on", "cut the budget of",
           "demoed", "rolled back", "is on call for", "documented the API of", "raised a risk about",
           "estimated two sprints for", "handed over", "load-tested", "migrated the data of", "closed the bugs of",
           "needs legal approval for", "presented the roadmap of"]
_WHEN = ["on Monday", "last week", "in March", "before the offsite", "after the outage", "this quarter",
         "yesterday", "two sprints ago", "at the all-hands", "over the holidays"]
_REASON = ["because the numbers did not add up", "after a customer escalation", "to unblock the mobile team",
           "since the contract renews soon", "as the auditors asked", "for the Berlin launch",
           "to cut the cloud bill", "while the lead was on leave", "at the CTO's request", "to meet the SLA"]


def _notes(count: int, seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    notes = []
    for g in range(1, count + 1):
        person, thing = rng.choice(PEOPLE), rng.choice(THINGS)
        notes.append((person, thing, f"{person} {rng.choice(_DOINGS)} the {thing} {rng.choice(_WHEN)} "
                                     f"{rng.choice(_REASON)} (ticket LTH-{g})."))
    return notes


_vectors: dict[tuple[int, int], Any] = {}


async def _add_facts(db: Database, tenant: str, memory_id: str, count: int, seed: int) -> None:
    """`count` facts of varied people and projects, each with its note's embedding by the gateway's own
    embedder (random vectors would be the HNSW index's worst case, not a memory's: in 384 dimensions every
    random pair is about equally far, and a search read eight times the index pages it reads over real notes),
    against an archived episode. The notes are the same for a seed, so their vectors are made once a run."""
    notes = _notes(count, seed)
    if (count, seed) not in _vectors:
        _vectors[count, seed] = await make_embedder().embed([note for _, _, note in notes])
    vectors = _vectors[count, seed]
    async with db.session() as session, session.begin():
        pk = (await session.execute(text("SELECT id FROM memories WHERE tenant_id = :t AND memory_id = :m"),
                                    {"t": tenant, "m": memory_id})).scalar_one()
        entities = {}
        for name in [*PEOPLE, *THINGS]:
            entities[name] = (await session.execute(text(
                "INSERT INTO entities (memory_pk, tenant_id, name, origin, at) VALUES (:pk, :t, :n, 'bench', now()) "
                "RETURNING id"), {"pk": pk, "t": tenant, "n": name})).scalar_one()
        rows = [{"pk": pk, "t": tenant, "key": f"bench:{g}", "note": note, "s": person, "o": thing,
                 "se": entities[person], "oe": entities[thing],
                 "v": "[" + ",".join(f"{v:.6f}" for v in vector) + "]"}
                for g, ((person, thing, note), vector) in enumerate(zip(notes, vectors, strict=True), start=1)]
        await session.execute(text(
            "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, episode_keys, "
            "first_turn, last_turn, at, valid_from, source, integrated_at, subject_entity_id, object_entity_id, "
            "words, embedding) VALUES (:pk, :t, :key, :note, :s, :o, false, ARRAY['archived'], 1, 1, now(), now(), "
            "'user', now(), :se, :oe, to_tsvector('simple', :note), CAST(:v AS vector))"), rows)
        # Autovacuum would take the table's statistics soon after a load like this; without them the planner
        # takes one memory's rows for a handful and scans them all instead of using the indexes.
        await session.execute(text("ANALYZE facts"))


async def _prepare(activities: RecallActivities, tenant: str, memory_id: str) -> int:
    event = JobInput(MemoryRef(tenant, memory_id), EventRef(seq=0, kind="report"))
    return int(await ActivityEnvironment().run(activities.prepare_recall, event))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=1000, help="stored messages per memory")
    parser.add_argument("--samples", type=int, default=120, help="timed decorates per memory")
    parser.add_argument("--deadline-ms", type=int, default=150)
    parser.add_argument("--out", default="bench/results/hot_path_recall.json")
    args = parser.parse_args()
    settings = Settings(_env_file=None)
    config = mechanism_config(settings)
    embedder = make_embedder(onnx_parallel=settings.models.onnx_parallel)  # as the gateway builds it
    judge = LocalJudge(embedder)
    async with embedded_database("lethe-bench-recall-cost-") as owner:
        # The gateway's and the lane's connections: the app role, under row-level security, with the tenant bound
        # (the owner's whole view plans some searches otherwise). The owner writes the bench's facts.
        db = Database(owner.url, role=settings.database.role, strict=True)
        timed = Timed(Recaller(embedder=embedder, judge=judge,
                               config=RecallConfig(mechanism=config, deadline_seconds=args.deadline_ms / 1000)))
        off = HotPath(db=db, counter=make_token_counter(), config=config)
        on = HotPath(db=db, counter=make_token_counter(), config=config, recaller=timed)  # type: ignore[arg-type]
        lane = RecallActivities(db=db, judge=judge, embedder=embedder, config=RecallConfig(mechanism=config))
        async with owner.session() as session, session.begin():
            tenant = (await tenants.create_tenant(session, name="recall-cost")).id
        bind_tenant(tenant)
        turns: dict[str, int] = {}
        for seed, (label, ctx) in enumerate((("off", off), ("on", on)), start=1):
            turns[label] = await _grow(ctx, tenant, label, args.size)
            # Facts of their own (another seed): two memories holding the same vectors would put a twin beside
            # every one of the recall memory's facts in the index, there for a search to read and filter out.
            await _add_facts(owner, tenant, label, args.facts, seed=seed)
        await _prepare(lane, tenant, "on")
        # Warm both (first embeddings, first plans), untimed.
        for label, ctx in (("off", off), ("on", on)):
            for _ in range(3):
                turns[label] += 1
                await _turn(ctx, tenant, label, [step_message(turns[label])], turns[label])
                if label == "on":
                    await _prepare(lane, tenant, "on")
        timed.times.clear()
        timed.provenance.clear()
        timings: dict[str, list[float]] = {"off": [], "on": []}
        prepared_walks = 0
        # Interleaved turns, so load on the machine falls on both alike.
        for _ in range(args.samples):
            for label, ctx in (("off", off), ("on", on)):
                turns[label] += 1
                timings[label].append(await _turn(ctx, tenant, label, [step_message(turns[label])], turns[label]))
                if label == "on":  # the lane, between this reply and the next message
                    prepared_walks += await _prepare(lane, tenant, "on") > 0
        results: dict[str, Any] = {
            "facts": args.facts, "stored_messages": args.size, "samples": args.samples,
            "deadline_ms": args.deadline_ms,
            "decorate_recall_off_ms": summary(timings["off"]), "decorate_recall_on_ms": summary(timings["on"]),
            "recall_find_ms": summary(timed.times), "provenance": timed.provenance,
            "walks_prepared": prepared_walks,
        }
        results["p50_ratio_on_to_off"] = round(results["decorate_recall_on_ms"]["p50"]
                                               / results["decorate_recall_off_ms"]["p50"], 3)
        results["find_p99_within_deadline"] = results["recall_find_ms"]["p99"] <= args.deadline_ms
        for label in ("off", "on"):
            row = results[f"decorate_recall_{label}_ms"]
            print(f"decorate, recall {label:<3} at {args.facts} facts: p50 {row['p50']:.1f} ms, p90 {row['p90']:.1f}, "
                  f"p99 {row['p99']:.1f}")
        find = results["recall_find_ms"]
        print(f"recall's own time: p50 {find['p50']:.1f} ms, p99 {find['p99']:.1f}, max {find['max']:.1f} "
              f"(deadline {args.deadline_ms} ms); provenance {timed.provenance}")
        print(f"p50 ratio, recall on to off: {results['p50_ratio_on_to_off']} (median of both: "
              f"{statistics.median(timings['on']):.1f} / {statistics.median(timings['off']):.1f} ms)")
        write_result(args.out, results)
        await db.dispose()


if __name__ == "__main__":
    asyncio.run(main())
