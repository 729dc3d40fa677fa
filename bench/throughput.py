"""Throughput: decorate/report pairs per second over many memories at once, errors counted, the gateway's and
the worker's RSS, and the lane's CPU per turn.

Starts `lethe dev` on free ports (bench/stack.py; the worker is its own process, with the embedded judge and
embedder), then `--concurrency` async clients (httpx) take turns on `--memories` memories for `--seconds`: a
memory is in one client's hands at a time, each turn a user message (only what is new), decorate, a scripted
reply answering any note ask, report. Then it waits for the lane to catch up (the worker's CPU going quiet, at
most `--settle` seconds) and divides the worker's CPU seconds since the start (less its idle rate) by the turns
processed.

    .venv/bin/python bench/throughput.py [--memories 200] [--concurrency 32] [--seconds 60]

Prints and writes bench/results/throughput.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.append(str(Path(__file__).resolve().parent))

from hot_path import reply_message, step_message  # noqa: E402
from stack import RESULTS, Stack, cpu_seconds, lane_cpu, rss_mb, running_stack  # noqa: E402
from stats import summary  # noqa: E402


async def _turns(client: httpx.AsyncClient, memories: asyncio.Queue[tuple[str, int]], until: float,
                 tally: dict[str, Any]) -> None:
    while time.monotonic() < until:
        memory_id, turn = await memories.get()
        started = time.perf_counter()
        try:
            decorated = await client.post(f"/v1/memories/{memory_id}/decorate",
                                          json={"model": "gpt-4o-mini", "messages": [step_message(turn)]})
            if decorated.status_code != 200:
                tally["errors"].append(f"decorate {decorated.status_code}: {decorated.text[:200]}")
                continue
            answer = decorated.json()
            reported = await client.post(f"/v1/memories/{memory_id}/report", json={
                "decorate_id": answer["decorate_id"], "response": reply_message(turn, answer)})
            if reported.status_code != 200:
                tally["errors"].append(f"report {reported.status_code}: {reported.text[:200]}")
                continue
            tally["pair_ms"].append((time.perf_counter() - started) * 1000)
            turn += 1
        except httpx.HTTPError as exc:
            tally["errors"].append(f"{type(exc).__name__}: {exc}")
        finally:
            memories.put_nowait((memory_id, turn))


async def _burst(stack: Stack, memory_count: int, concurrency: int, seconds: float) -> dict[str, Any]:
    memories: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    for i in range(memory_count):
        memories.put_nowait((f"load-{i}", 1))
    tally: dict[str, Any] = {"pair_ms": [], "errors": []}
    peak = {"gateway_rss_mb": 0.0, "worker_rss_mb": 0.0}

    async def watch() -> None:
        while True:
            peak["gateway_rss_mb"] = max(peak["gateway_rss_mb"], rss_mb(stack.gateway_pid))
            peak["worker_rss_mb"] = max(peak["worker_rss_mb"], rss_mb(stack.worker_pid))
            await asyncio.sleep(0.5)

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=stack.url, headers={"Authorization": f"Bearer {stack.key}"},
                                 timeout=60, limits=limits) as client:
        watcher = asyncio.create_task(watch())
        started = time.monotonic()
        await asyncio.gather(*(_turns(client, memories, started + seconds, tally) for _ in range(concurrency)))
        elapsed = time.monotonic() - started
        watcher.cancel()
    return {"seconds": round(elapsed, 1), "pairs": len(tally["pair_ms"]), "errors": len(tally["errors"]),
            "error_samples": tally["errors"][:5], "pair_ms": tally["pair_ms"], **peak}


def run(stack: Stack, memories: int, concurrency: int, seconds: float, settle: float) -> dict[str, Any]:
    bursts: list[dict[str, Any]] = []

    def drive() -> int:
        gateway_from = cpu_seconds(stack.gateway_pid)
        bursts.append(asyncio.run(_burst(stack, memories, concurrency, seconds)))
        bursts[0]["gateway_cpu"] = cpu_seconds(stack.gateway_pid) - gateway_from
        return int(bursts[0]["pairs"])

    lane = lane_cpu(stack, drive, settle)
    burst = bursts[0]
    gateway_cpu = burst.pop("gateway_cpu")
    pairs = burst.pop("pair_ms")
    result = {
        "memories": memories, "concurrency": concurrency, **burst,
        "pairs_per_second": round(burst["pairs"] / burst["seconds"], 1),
        "pair_ms": summary(pairs) if pairs else None,
        "gateway_cpu_ms_per_turn": round(gateway_cpu / max(1, burst["pairs"]) * 1000, 1),
        **{k: v for k, v in lane.items() if k != "turns"},
        "judge": "embedded (LETHE_JUDGE=local)", "lane_cpu_target_ms": 150,
    }
    print(f"  {result['pairs']} decorate/report pairs in {result['seconds']} s over {memories} memories at "
          f"concurrency {concurrency}: {result['pairs_per_second']} pairs/s, {result['errors']} errors, pair p50 "
          f"{(result['pair_ms'] or {}).get('p50')} ms p99 {(result['pair_ms'] or {}).get('p99')} ms; RSS gateway "
          f"{result['gateway_rss_mb']} MB, worker {result['worker_rss_mb']} MB", flush=True)
    print(f"  lane CPU per turn (embedded judge): {result['lane_cpu_ms_per_turn']} ms (target at most 150 ms; "
          f"lane {'caught up' if result['lane_caught_up'] else 'NOT caught up'} after "
          f"{result['lane_catch_up_seconds']:.0f} s); gateway "
          f"CPU per turn {result['gateway_cpu_ms_per_turn']} ms", flush=True)
    return result


def write(result: dict[str, Any]) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "throughput.json").write_text(json.dumps(result, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--settle", type=float, default=240, help="longest wait for the lane to catch up")
    args = parser.parse_args()
    with running_stack("lethe-bench-throughput-") as stack:
        write(run(stack, args.memories, args.concurrency, args.seconds, args.settle))


if __name__ == "__main__":
    main()
