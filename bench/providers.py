"""Embedding and judge throughput on this machine, printed and written as JSON.

Embedding is timed in both precisions of the embedded model (int8 and float32), with the CPU's model and the
flags that decide between them, and the choice `LETHE_EMBEDDER_PRECISION=auto` makes here.

.venv/bin/python bench/providers.py [--threads N] [--out bench/results/providers.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from providers.embedder import CachingEmbedder, LocalEmbedder  # noqa: E402
from providers.local_judge import LocalJudge  # noqa: E402
from providers.precision import PRECISIONS, RELEVANT_FLAGS, SAMPLE_TEXTS, cpu, faster, measure  # noqa: E402
from providers.tokens import TiktokenCounter  # noqa: E402

__all__ = ["main"]

_SUBJECTS = [
    "pricing page",
    "checkout migration",
    "refund line",
    "tax rate table",
    "Lisbon offsite",
    "CI pipeline",
]
_VERBS = ["awaits", "is blocked on", "was approved by", "depends on", "replaces", "is owned by"]


def _texts(n: int, *, salt: str) -> list[str]:
    return [
        f"{_SUBJECTS[i % 6].capitalize()} {_VERBS[(i // 6) % 6]} {_SUBJECTS[(i * 7 + 3) % 6]}"
        f" as of turn {i} ({salt})."
        for i in range(n)
    ]


def _ms_alone(embedder: LocalEmbedder, text: str, runs: int = 30) -> float:
    """Median milliseconds for `text` embedded on its own, as the hot path embeds a message's parts."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        embedder.embed_sync([text])
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times), 2)


def _embedding(threads: int, results: dict[str, object]) -> LocalEmbedder:
    """Both precisions: load, texts per second over 512 short texts (each precision's own batching), and ms per
    text for a short and a message-sized text alone; then the choice `auto` makes. Returns the int8 model."""
    machine = cpu()
    results["cpu_model"] = machine.model
    results["cpu_flags"] = " ".join(flag for flag in RELEVANT_FLAGS if flag in machine.flags) or "none"
    texts = _texts(512, salt="embed")
    models = {}
    for precision in PRECISIONS:
        start = time.perf_counter()
        model = models[precision] = LocalEmbedder(threads=threads, int8=precision == "int8")
        results[f"embed_{precision}_load_s"] = round(time.perf_counter() - start, 3)
        model.embed_sync(texts[:32])  # warm the session before timing
        start = time.perf_counter()
        model.embed_sync(texts)
        results[f"embed_{precision}_texts_per_s"] = round(len(texts) / (time.perf_counter() - start), 1)
        results[f"embed_{precision}_short_ms"] = _ms_alone(model, SAMPLE_TEXTS[0])
        results[f"embed_{precision}_message_ms"] = _ms_alone(model, SAMPLE_TEXTS[1])
    start = time.perf_counter()
    timed = measure(threads=threads)  # as a first start times them (the measurement, not its cache)
    results["auto_measure_s"] = round(time.perf_counter() - start, 3)
    for precision in PRECISIONS:
        results[f"auto_{precision}_ms_per_text"] = timed[precision]
    results["auto_choice"] = faster(timed)
    return models["int8"]


async def _run(threads: int) -> dict[str, object]:
    results: dict[str, object] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "threads": threads,
    }
    local = _embedding(threads, results)
    # The judge's figures below are on int8, as they were before float32 was timed here too.
    results["embed_texts_per_s"] = results["embed_int8_texts_per_s"]

    judge = LocalJudge(CachingEmbedder(local))
    facts = _texts(200, salt="fact")
    episodes = [" ".join(_texts(12, salt=f"episode {j}")) for j in range(10)]
    start = time.perf_counter()
    await judge.judge_about(facts, episodes)
    results["judge_about_pairs_per_s"] = round(len(facts) * len(episodes) / (time.perf_counter() - start), 1)

    pairs = list(zip(_texts(300, salt="old"), _texts(300, salt="new"), strict=True))
    start = time.perf_counter()
    await judge.judge_contradiction(pairs)
    results["judge_contradiction_pairs_per_s"] = round(len(pairs) / (time.perf_counter() - start), 1)

    candidates = _texts(300, salt="candidate")
    start = time.perf_counter()
    await judge.rate_relevance("Who owns the checkout migration now, and is it still blocked?", candidates)
    results["judge_relevance_facts_per_s"] = round(len(candidates) / (time.perf_counter() - start), 1)

    counter = TiktokenCounter()
    counter.count_text("warm")
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": t} for t in _texts(512, salt="embed")]}
    start = time.perf_counter()
    for _ in range(20):
        counter.count_request(body)
    results["count_request_512_messages_ms"] = round((time.perf_counter() - start) / 20 * 1000, 2)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "providers.json")
    args = parser.parse_args()
    results = asyncio.run(_run(args.threads))
    for key, value in results.items():
        print(f"{key:36} {value}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
