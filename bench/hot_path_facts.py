"""Does a decorate slow down as the graph grows? Decorate p50 in-process (no HTTP, no worker) on two memories
alike but for how many facts they hold: `--small` and `--large` facts, integrated into the graph (entities
linked, words and vectors indexed) and kept against an archived episode, as most facts of a long memory are.

    .venv/bin/python bench/hot_path_facts.py --size 1000 --small 100 --large 10000 --samples 60
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hot_path import import_history, step_message  # noqa: E402
from profile_hot_path import _turn  # noqa: E402
from sqlalchemy import text  # noqa: E402
from stack import embedded_database, write_result  # noqa: E402
from stats import percentile  # noqa: E402

from config.mechanism import mechanism_config  # noqa: E402
from config.settings import Settings  # noqa: E402
from providers.factory import make_token_counter  # noqa: E402
from service.context import HotPath  # noqa: E402
from store.db import Database  # noqa: E402
from store.repositories import tenants  # noqa: E402


async def _grow(ctx: HotPath, tenant: str, memory_id: str, size: int) -> int:
    stored, turn = 0, 1
    while stored < size:
        history, turn = import_history(turn, min(25, max(1, (size - stored) // 2)))
        await _turn(ctx, tenant, memory_id, history, turn)
        stored += len(history) + 1
    return turn


async def _add_facts(db: Database, tenant: str, memory_id: str, count: int) -> None:
    async with db.session() as session, session.begin():
        pk = (await session.execute(text("SELECT id FROM memories WHERE tenant_id = :t AND memory_id = :m"),
                                    {"t": tenant, "m": memory_id})).scalar_one()
        entity = (await session.execute(text(
            "INSERT INTO entities (memory_pk, tenant_id, name, origin, at) VALUES (:pk, :t, 'Dana', 'bench', now()) "
            "RETURNING id"), {"pk": pk, "t": tenant})).scalar_one()
        await session.execute(text(
            "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, episode_keys, "
            "first_turn, last_turn, at, valid_from, source, integrated_at, subject_entity_id, object_entity_id, "
            "words, embedding) SELECT :pk, :t, 'bench:' || g, 'Dana owns item ' || g || ' of the checkout.', "
            "'Dana', 'item ' || g, false, ARRAY['archived'], 1, 1, now(), now(), 'user', now(), :e, :e, "
            "to_tsvector('simple', 'Dana owns item ' || g), array_fill(0.05, ARRAY[384])::vector "
            "FROM generate_series(1, :n) g"), {"pk": pk, "t": tenant, "e": entity, "n": count})


async def _measure(ctx: HotPath, tenant: str, memory_id: str, turn: int, samples: int) -> list[float]:
    timings = []
    for _ in range(samples):
        turn += 1
        timings.append(await _turn(ctx, tenant, memory_id, [step_message(turn)], turn))
    return sorted(timings)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="stored messages per memory")
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--large", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--out", default="bench/results/hot_path_facts.json")
    args = parser.parse_args()
    async with embedded_database("lethe-bench-facts-") as db:
        ctx = HotPath(db=db, counter=make_token_counter(), config=mechanism_config(Settings(_env_file=None)))
        async with db.session() as session, session.begin():
            tenant = (await tenants.create_tenant(session, name="facts")).id
        results = {}
        turns = {}
        for label, count in (("small", args.small), ("large", args.large)):
            turns[label] = await _grow(ctx, tenant, label, args.size)
            await _add_facts(db, tenant, label, count)
        # Interleaved rounds, so load on the machine falls on both alike.
        timings: dict[str, list[float]] = {"small": [], "large": []}
        for _ in range(4):
            for label in ("small", "large"):
                got = await _measure(ctx, tenant, label, turns[label], args.samples // 4)
                turns[label] += args.samples // 4
                timings[label] += got
        for label, count in (("small", args.small), ("large", args.large)):
            ms = timings[label]
            results[label] = {"facts": count, "p50_ms": round(statistics.median(ms), 2),
                              "p90_ms": round(percentile(ms, 0.9), 2)}
            print(f"decorate with {count:>6} facts: p50 {results[label]['p50_ms']:.1f} ms, "
                  f"p90 {results[label]['p90_ms']:.1f} ms")
        results["ratio_p50"] = round(results["large"]["p50_ms"] / results["small"]["p50_ms"], 3)
        print(f"p50 ratio, {args.large} facts to {args.small}: {results['ratio_p50']}")
        write_result(args.out, results)


if __name__ == "__main__":
    asyncio.run(main())
