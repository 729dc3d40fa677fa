"""What naming the user costs a decorate (issue #37): decorate p50 for a conversation whose user's graph holds
10,000 facts, against the same conversation without a user, in one run. Target: at most 1.2x.

Two memories hold the same conversation at a small ceiling (so they fade, and recall runs on every new user
message), their turns interleaved so both meet the same machine: one names the user (`X-Lethe-User`), the other
does not. The user's graph is filled straight in its tables, as its lane leaves integrated facts (the note, its
word index and vector, in the database's embedder precision): integrating 10,000 facts through the lane's judge
would take the better part of an hour and measure nothing this bench is about. A tenth of the messages touch a
fact of the graph; the rest are the conversation's own.

    .venv/bin/python bench/decorate_user.py [--facts 10000] [--turns 120] [--pause 0.3] [--ceiling 6000]

Prints both p50/p99 and their ratio, and how many blocks carried facts of the user's graph; writes
bench/results/decorate_user.json.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parent)]

# The package first: bench/untouched.py puts bench/ (which has a providers.py of its own) ahead on the path.
from providers.embedder import LocalEmbedder  # noqa: E402, I001
from stack import RESULTS, cpu_facts, running_stack, wait_for_lane, write_result  # noqa: E402, I001
from untouched import MODEL, facts, messages  # noqa: E402, I001

USER = "bench-user"
WITH, WITHOUT = "with-user", "without-user"
TARGET = 1.2


def _fill_graph(url: str, notes: list[dict[str, str]]) -> None:
    """The user's graph holds `notes` as integrated facts of its own (source `user`), with vectors made in the
    precision the database records."""
    with psycopg.connect(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT value FROM deployment_settings WHERE key = 'embedder_precision'")
        row = cur.fetchone()
        int8 = (row[0] if row else "int8") == "int8"
        cur.execute("SELECT id, tenant_id FROM memories WHERE memory_id = %s", (f"~user:{USER}",))
        graph_pk, tenant_id = cur.fetchone()  # type: ignore[misc]
    embedder = LocalEmbedder(threads=2, int8=int8)
    started = time.monotonic()
    for start in range(0, len(notes), 500):
        batch = notes[start:start + 500]
        vectors = asyncio.run(embedder.embed([n["note"] for n in batch]))
        with psycopg.connect(url) as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO facts (memory_pk, tenant_id, fact_key, note, subject, object, milestone, "
                "episode_keys, first_turn, last_turn, at, source, valid_from, kind, integrated_at, words, "
                "embedding, origin_memory_id, origin_fact_key) VALUES (%s, %s, %s, %s, %s, %s, false, '{}', 1, "
                "1, now(), 'user', now(), 'fact', now(), to_tsvector('simple', %s), %s::vector, %s, %s)",
                [(graph_pk, tenant_id, f"bench:{start + i}", n["note"], n["subject"], n["object"], n["note"],
                  "[" + ",".join(f"{x:.6f}" for x in v) + "]", "an-earlier-chat", f"bench:{start + i}")
                 for i, (n, v) in enumerate(zip(batch, vectors, strict=True))])
        print(f"    {start + len(batch)} facts in the user's graph ({time.monotonic() - started:.0f} s)",
              flush=True)


def _turn(client: Any, memory_id: str, history: list[dict[str, Any]], text: str, turn: int,
          user: str | None) -> float:
    history.append({"role": "user", "content": text})
    headers = {"X-Lethe-User": user} if user else {}
    started = time.perf_counter()
    answer = client.post(f"/v1/memories/{memory_id}/decorate", headers=headers,
                         json={"model": MODEL, "messages": history}).raise_for_status().json()
    took = (time.perf_counter() - started) * 1000
    reply = {"role": "assistant", "content": f"Noted, and here is what I found about that ({turn}). " * 3}
    client.post(f"/v1/memories/{memory_id}/report", headers=headers, json={
        "decorate_id": answer["decorate_id"],
        "response": {"choices": [{"message": reply, "finish_reason": "stop"}]}}).raise_for_status()
    history.append(reply)
    return took


def _p(values: list[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100)[int(q) - 1], 1) if len(values) > 1 else values[0]


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    notes = facts(args.facts, rng)
    talk = messages(args.turns, rng)
    # A tenth of the messages ask about a fact of the user's graph (what recall across is for).
    for i in range(0, len(talk), 10):
        talk[i] = f"Remind me, is this still right? {rng.choice(notes)['note']}"
    with running_stack("lethe-bench-decorate-user-", LETHE_CEILING_TOKENS=str(args.ceiling)) as stack, \
            stack.client() as client:
        histories: dict[str, list[dict[str, Any]]] = {
            m: [{"role": "system", "content": "You are a friendly assistant."}] for m in (WITH, WITHOUT)}
        _turn(client, WITH, histories[WITH], "Hello!", 0, USER)  # makes the user and the graph
        _turn(client, WITHOUT, histories[WITHOUT], "Hello!", 0, None)
        _fill_graph(stack.postgres_url(), notes)
        wait_for_lane(stack, timeout=600)
        took: dict[str, list[float]] = {WITH: [], WITHOUT: []}
        for turn, text in enumerate(talk, start=1):
            # Interleaved, the order alternating: both meet the same machine at the same moments.
            for memory_id in ((WITH, WITHOUT) if turn % 2 else (WITHOUT, WITH)):
                user = USER if memory_id == WITH else None
                took[memory_id].append(_turn(client, memory_id, histories[memory_id], text, turn, user))
                time.sleep(args.pause)
        state = client.get(f"/v1/memories/{WITH}").raise_for_status().json()
        blocks = state["recall_blocks"]
    warm = {m: v[args.turns // 10:] for m, v in took.items()}  # the first turns fill the view: not yet recalling
    result = {
        "user_graph_facts": args.facts, "turns": args.turns, "ceiling": args.ceiling, "pause_seconds": args.pause,
        "decorate_ms": {m: {"p50": _p(v, 50), "p99": _p(v, 99), "max": round(max(v), 1)} for m, v in warm.items()},
        "blocks_with_user": len(blocks),
        "blocks_from_elsewhere": sum(1 for b in blocks if "another conversation" in (b.get("placed") or "")),
        "machine": cpu_facts(),
    }
    result["ratio_p50"] = round(result["decorate_ms"][WITH]["p50"] / result["decorate_ms"][WITHOUT]["p50"], 3)
    result["target_at_most"] = TARGET
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--pause", type=float, default=0.3, help="seconds after each report")
    parser.add_argument("--ceiling", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--out", default=str(RESULTS / "decorate_user.json"))
    args = parser.parse_args()
    result = run(args)
    m, ms = result["machine"], result["decorate_ms"]
    print(f"\ndecorate at a {result['ceiling']} ceiling, {result['pause_seconds']} s after each report, "
          f"a user graph of {result['user_graph_facts']} facts:")
    print(f"  without a user  p50 {ms[WITHOUT]['p50']} ms  p99 {ms[WITHOUT]['p99']} ms")
    print(f"  with the user   p50 {ms[WITH]['p50']} ms  p99 {ms[WITH]['p99']} ms")
    print(f"  ratio of p50s: {result['ratio_p50']} (target at most {TARGET})")
    print(f"  recall blocks with the user: {result['blocks_with_user']}, holding another conversation's facts: "
          f"{result['blocks_from_elsewhere']}")
    print(f"  on {m['cpus']} cores, {m['cpu_model']}, flags {' '.join(m['cpu_flags']) or 'none'}")
    write_result(args.out, result)


if __name__ == "__main__":
    main()
