"""The knowledge graph's cost on this machine: facts per second through the lane's graph job and its CPU per
fact at given graph sizes, and search latency (words, meaning, fused) over facts and passages. Printed and
written as JSON.

.venv/bin/python bench/graph.py                      # quick: 1k facts, search at 10k facts / 20k passages
.venv/bin/python bench/graph.py --full               # the issue's sizes: 1k and 10k facts, 100k passages
.venv/bin/python bench/graph.py --facts 1000 10000 --passages 100000 --out bench/results/graph.json

The graph job runs as the worker runs it (the `update_graph` activity, embedded judge and embedder, one
thread) against an embedded Postgres of its own. Search runs on facts the job integrated, topped up to the
search size, and on passages; rows added only for search get their words from templates and vectors from the
embedder on a small vocabulary of sentences, so the indexes hold real, varied data.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import resource
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from sqlalchemy import text  # noqa: E402
from stack import embedded_database, write_result  # noqa: E402
from temporalio.testing import ActivityEnvironment  # noqa: E402

from activities.graph import GraphActivities  # noqa: E402
from contracts.lane_types import EventRef, JobInput, MemoryRef  # noqa: E402
from engine.facts import Fact  # noqa: E402
from engine.recall.fusion import fuse  # noqa: E402
from providers.embedder import CachingEmbedder, LocalEmbedder  # noqa: E402
from providers.local_judge import LocalJudge  # noqa: E402
from store.db import Database  # noqa: E402
from store.repositories import fact_store, memories, search, tenants  # noqa: E402

__all__ = ["main"]

PEOPLE = [f"{first} {last}" for first in ("Dana", "Raj", "Priya", "Marco", "Ana", "Jim", "Liz", "Sam", "Kate", "Tom")
          for last in ("Whitfield", "Patel", "Raman", "Rossi", "Lopez", "Okafor", "Park", "Ortiz", "Moss", "Berg")]
THINGS = [f"{adj} {noun}" for adj in ("checkout", "pricing", "tax", "refund", "billing", "search", "signup",
                                      "mobile", "partner", "analytics")
          for noun in ("migration", "page", "table", "line", "API", "review", "rota", "dashboard", "flag", "export")]
VERBS = ["owns", "reviews", "blocks", "approved", "needs", "wrote", "tests", "ships"]
T0 = datetime(2031, 1, 1, tzinfo=UTC)


def _note(i: int, rng: random.Random) -> dict[str, Any]:
    who, what, verb = rng.choice(PEOPLE), rng.choice(THINGS), rng.choice(VERBS)
    if i % 7 == 0:
        return {"note": f"The {what} {verb} ticket ORD-{10000 + i} with {i % 97} items.", "subject": what,
                "object": f"ORD-{10000 + i}"}
    return {"note": f"{who} {verb} the {what} (item {i}).", "subject": who, "object": what}


async def _write_facts(db: Database, tenant_id: str, memory_id: str, start: int, count: int) -> None:
    rng = random.Random(start)
    async with db.session() as session, session.begin():
        memory = await memories.lock_memory(session, tenant_id=tenant_id, memory_id=memory_id)
        facts = []
        for i in range(start, start + count):
            n = _note(i, rng)
            facts.append(Fact(id=f"bench{i // 10}:{i % 10}", note=n["note"], subject=n["subject"],
                              object=n["object"], milestone=False, episode_ids=(), at=T0 + timedelta(minutes=i),
                              first_turn=i, last_turn=i, source="user"))
        fact_store.add_facts(session, tenant_id=tenant_id, memory_pk=memory.id, note_call_id=None, facts=facts)


async def _lane(db: Database, graph: GraphActivities, tenant_id: str, sizes: list[int]) -> list[dict[str, Any]]:
    """Grow one memory to each size; time the graph job over the last 200 facts written at that size."""
    results, written, probe = [], 0, 200
    env = ActivityEnvironment()
    for size in sizes:
        bulk = size - probe - written
        if bulk > 0:
            await _write_facts(db, tenant_id, "lane", written, bulk)
            written += bulk
            # The graph up to here is built by the same job; it is not what is timed.
            await env.run(graph.update_graph, JobInput(MemoryRef(tenant_id, "lane"), EventRef(seq=0, kind="bench")))
        await _write_facts(db, tenant_id, "lane", written, probe)
        written += probe
        cpu, wall = time.process_time(), time.perf_counter()
        done = await env.run(graph.update_graph, JobInput(MemoryRef(tenant_id, "lane"), EventRef(0, "bench")))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        row = {"facts_in_memory": size, "facts_timed": done, "facts_per_s": round(done / wall, 1),
               "lane_cpu_ms_per_fact": round(1000 * cpu / max(done, 1), 2),
               "wall_ms_per_fact": round(1000 * wall / max(done, 1), 2)}
        print(f"lane  {size:>6} facts in memory: {row['facts_per_s']:7.1f} facts/s, "
              f"{row['lane_cpu_ms_per_fact']:6.2f} ms CPU per fact (worker process)")
        results.append(row)
    return results


async def _fill_search(db: Database, embedder: CachingEmbedder, tenant_id: str, facts: int, passages: int,
                       language: str) -> None:
    """Top the memory up to `facts` integrated facts and `passages` passages for the search figures."""
    rng = random.Random(7)
    vocabulary = [_note(i, rng)["note"] for i in range(512)]
    vectors = await embedder.embed(vocabulary)
    async with db.session() as session, session.begin():
        pk = (await session.execute(text("SELECT id FROM memories WHERE tenant_id = :t AND memory_id = 'lane'"),
                                    {"t": tenant_id})).scalar_one()
        have = (await session.execute(text("SELECT count(*) FROM facts WHERE memory_pk = :pk"), {"pk": pk})).scalar()
        rows = []
        for i in range(have, facts):
            k = i % len(vocabulary)
            rows.append({"pk": pk, "t": tenant_id, "key": f"fill:{i}", "note": f"{vocabulary[k]} Ref DOC-{i}.",
                         "v": str(vectors[k].tolist()), "at": T0})
        for chunk in range(0, len(rows), 2000):
            await session.execute(text(
                "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, episode_keys, "
                "first_turn, last_turn, at, valid_from, source, integrated_at, words, embedding) VALUES (:pk, :t, "
                ":key, :note, '', '', false, '{}', 0, 0, :at, :at, 'user', :at, "
                f"to_tsvector('{language}', :note), CAST(:v AS vector))"), rows[chunk:chunk + 2000])
        rows = []
        for i in range(passages):
            k = i % len(vocabulary)
            body = f"user: {vocabulary[k]} assistant: noted, see log LOG-{i} and {vocabulary[(k * 31) % 512]}"
            rows.append({"pk": pk, "t": tenant_id, "ep": f"ep{i // 8}", "o": i % 8, "text": body,
                         "v": str(vectors[k].tolist()), "at": T0})
        for chunk in range(0, len(rows), 2000):
            await session.execute(text(
                "INSERT INTO passages (memory_pk, tenant_id, episode_key, ordinal, first_seq, last_seq, first_turn, "
                "last_turn, text, words, embedding, at) VALUES (:pk, :t, :ep, :o, 1, 1, 1, 1, :text, "
                f"to_tsvector('{language}', :text), CAST(:v AS vector), :at)"), rows[chunk:chunk + 2000])
    # Committed, or the statistics are rolled back with the session and the planner guesses the memory holds a
    # handful of rows (it then sorts every row by distance instead of walking the HNSW index).
    async with db.session() as session, session.begin():
        await session.execute(text("ANALYZE facts"))
        await session.execute(text("ANALYZE passages"))


async def _search(db: Database, embedder: CachingEmbedder, tenant_id: str, queries: int) -> dict[str, Any]:
    rng = random.Random(11)
    asked = [rng.choice(["Dana Whitfield checkout migration", "ORD-10049", "pricing page review",
                         "who owns the tax table", "LOG-4242", "refund line ships"]) for _ in range(queries)]
    async with db.session() as session:
        pk = (await session.execute(text("SELECT id FROM memories WHERE tenant_id = :t AND memory_id = 'lane'"),
                                    {"t": tenant_id})).scalar_one()
    timings: dict[str, list[float]] = {"words": [], "meaning": [], "fused": []}
    for query in asked:
        (vector,) = await embedder.embed([query])  # cached after the first: search cost, not embedding cost
        async with db.session() as session:
            start = time.perf_counter()
            words = await search.ranked_by_words(session, tenant_id=tenant_id, memory_pk=pk,
                                                 queries=[("facts", query), ("passages", query)])
            timings["words"].append(time.perf_counter() - start)
        async with db.session() as session:
            start = time.perf_counter()
            meaning = [*await search.ranked_by_meaning(session, tenant_id=tenant_id, memory_pk=pk, vectors=[vector]),
                       *await search.ranked_by_meaning(session, tenant_id=tenant_id, memory_pk=pk, vectors=[vector],
                                                       kind="passages")]
            timings["meaning"].append(time.perf_counter() - start)
        async with db.session() as session:
            start = time.perf_counter()
            facts = [*await search.ranked_by_words(session, tenant_id=tenant_id, memory_pk=pk,
                                                   queries=[("facts", query)]),
                     *await search.ranked_by_meaning(session, tenant_id=tenant_id, memory_pk=pk, vectors=[vector])]
            fuse(facts)
            timings["fused"].append(time.perf_counter() - start)
        assert any(words) or any(meaning)
    out = {}
    for name, values in timings.items():
        ms = sorted(1000 * v for v in values)
        out[name] = {"p50_ms": round(statistics.median(ms), 2), "p90_ms": round(ms[int(0.9 * (len(ms) - 1))], 2),
                     "max_ms": round(ms[-1], 2)}
        print(f"search {name:<8} p50 {out[name]['p50_ms']:7.2f} ms  p90 {out[name]['p90_ms']:7.2f} ms "
              "(facts and passages both)")
    return out


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    async with embedded_database("lethe-bench-graph-", pool_size=4) as db:
        embedder = CachingEmbedder(LocalEmbedder(threads=1))
        graph = GraphActivities(db, LocalJudge(embedder), embedder, language="simple")
        async with db.session() as session, session.begin():
            tenant_id = (await tenants.create_tenant(session, name="bench-graph")).id
        lane = await _lane(db, graph, tenant_id, sorted(args.facts))
        start = time.perf_counter()
        await _fill_search(db, embedder, tenant_id, args.search_facts, args.passages, "simple")
        print(f"search data: {args.search_facts} facts, {args.passages} passages "
              f"(filled in {time.perf_counter() - start:.0f} s)")
        searched = await _search(db, embedder, tenant_id, args.queries)
        return {"lane": lane, "search": {"facts": args.search_facts, "passages": args.passages, **searched},
                "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "cpus": os.cpu_count()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, nargs="+", default=[1000], help="graph sizes to time the lane at")
    parser.add_argument("--search-facts", type=int, default=10_000)
    parser.add_argument("--passages", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--full", action="store_true", help="the issue's sizes: 1k and 10k facts, 100k passages")
    parser.add_argument("--out", default="bench/results/graph.json")
    args = parser.parse_args()
    if args.full:
        args.facts, args.passages, args.search_facts = [1000, 10_000], 100_000, 10_000
    write_result(args.out, asyncio.run(_run(args)))


if __name__ == "__main__":
    main()
