"""Where a decorate's time goes: the hot path called in-process (no HTTP, no worker) on the embedded Postgres.

Grows one memory to `--size` stored messages the way bench/hot_path.py does (imports of 25 past turns, a model
that answers every note ask), keeps it in `--data-dir` so a second run starts at once, then times `--samples`
further turns and, with `--profile`, prints the functions that took the most time.

    .venv/bin/python bench/profile_hot_path.py --size 10000 --samples 50 --profile
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import cProfile
import gc
import json
import pstats
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the packages before bench/providers.py

from hot_path import import_history, reply_message, step_message  # noqa: E402

from config.mechanism import mechanism_config  # noqa: E402
from config.settings import Settings  # noqa: E402
from engine.traces import Trace  # noqa: E402
from providers.factory import make_token_counter  # noqa: E402
from service.clock import Clock  # noqa: E402
from service.context import HotPath  # noqa: E402
from service.decorate import decorate  # noqa: E402
from service.report import report  # noqa: E402
from store.db import Database  # noqa: E402
from store.embedded import EmbeddedPostgres  # noqa: E402
from store.migrate import upgrade_to_head  # noqa: E402
from store.repositories import episode_store, memories, tenants, trace_store  # noqa: E402


async def _turn(ctx: HotPath, tenant: str, memory_id: str, history: list[dict[str, Any]], turn: int) -> float:
    started = time.perf_counter()
    answer = json.loads(await decorate(ctx, tenant_id=tenant, memory_id=memory_id, body={"model": "gpt-4o-mini",
                            "messages": history}, clock=Clock(datetime.now(UTC)), idempotency_key=None))
    decorate_ms = (time.perf_counter() - started) * 1000
    reply = reply_message(turn, answer)
    await report(ctx, tenant_id=tenant, memory_id=memory_id, clock=Clock(datetime.now(UTC)), idempotency_key=None,
                 body={"decorate_id": answer["decorate_id"], "response": reply})
    return decorate_ms


async def _lane_change(db: Database, tenant: str, pk: int) -> None:
    async with db.session() as session, session.begin():
        remembered = await episode_store.load_episodes(session, tenant_id=tenant, memory_pk=pk, forgotten=False)
        if remembered:
            await trace_store.add_traces(session, tenant_id=tenant, memory_pk=pk, traces=[Trace(
                at=datetime.now(UTC), score=0.5, counted=True, episode_id=remembered[-1].id, fact_id=None)])


def _census() -> None:
    gc.collect()
    tracked = gc.get_objects()
    kinds = collections.Counter(type(o).__name__ for o in tracked)
    del tracked
    started = time.perf_counter()
    gc.collect()
    print(f"objects the collector tracks: {sum(kinds.values()):,}; a full collection took "
          f"{(time.perf_counter() - started) * 1000:.0f} ms; most common: "
          + ", ".join(f"{name} {count:,}" for name, count in kinds.most_common(12)))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/lethe-profile"))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="cumulative", help="pstats order: cumulative or tottime")
    parser.add_argument("--census", action="store_true",
                        help="after the timed turns: the objects the garbage collector tracks, by type, and how long "
                             "a full collection takes (what every gen-2 pause of the gateway walks)")
    parser.add_argument("--lane-changes", action="store_true",
                        help="before each turn, write a trace for a remembered episode, as the lane does between "
                             "turns (it moves the memory's mechanism version)")
    args = parser.parse_args()

    postgres = EmbeddedPostgres(args.data_dir / "postgres")
    url = postgres.start()
    await upgrade_to_head(url)
    db = Database(url)
    # No lane runs here, so nothing is judged: cuts happen only where the ceiling forces them (docs/cutting.md).
    ctx = HotPath(db=db, counter=make_token_counter(), config=mechanism_config(Settings()))
    async with db.session() as session, session.begin():
        tenant = await tenants.get_tenant_by_name(session, name="profile") or await tenants.create_tenant(
            session, name="profile")
    memory_id = f"profile-{args.size}"
    async with db.session() as session:
        try:
            pk = (await memories.get_memory(session, tenant_id=tenant.id, memory_id=memory_id)).id
            stored = await memories.count_messages(session, tenant_id=tenant.id, memory_pk=pk)
        except Exception:  # noqa: BLE001 - not there yet
            stored = 0
    turn = stored // 2 + 1
    started = time.monotonic()
    while stored < args.size:
        history, turn = import_history(turn, min(25, max(1, (args.size - stored) // 2)))
        await _turn(ctx, tenant.id, memory_id, history, turn)
        stored += len(history) + 1
    async with db.session() as session:
        pk = (await memories.get_memory(session, tenant_id=tenant.id, memory_id=memory_id)).id
    print(f"grown to {stored} messages in {time.monotonic() - started:.1f} s", flush=True)

    turn += 1  # one untimed turn: a fresh process reads the whole history once (timed apart, below)
    started = time.perf_counter()
    await _turn(ctx, tenant.id, memory_id, [step_message(turn)], turn)
    print(f"first decorate of this process (reads the whole memory): {(time.perf_counter() - started) * 1000:.0f} ms")
    profiler = cProfile.Profile()
    timings = []
    for _ in range(args.samples):
        turn += 1
        if args.lane_changes:
            await _lane_change(db, tenant.id, pk)
        if args.profile:
            profiler.enable()
        timings.append(await _turn(ctx, tenant.id, memory_id, [step_message(turn)], turn))
        if args.profile:
            profiler.disable()
    timings.sort()
    print(f"decorate in-process: p50 {statistics.median(timings):.1f} ms, "
          f"p90 {timings[int(len(timings) * 0.9)]:.1f} ms, max {timings[-1]:.1f} ms")
    if args.profile:
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(45)
    if args.census:
        _census()
    await db.dispose()
    postgres.stop()


if __name__ == "__main__":
    asyncio.run(main())
