"""Side by side, same run, same conversation, same embedder and Postgres: what each memory layer adds to a turn.

- Lethe: decorate plus report per turn over HTTP (the agent's wait, client side), with recall on
  (`LETHE_RECALL=1`; a build without that setting ignores it).
- mem0 (bench/peers/mem0_peer.py: infer off, no LLM, the project's embedder, pgvector in the stack's own
  Postgres): search for the user message, then add the turn's two messages.
- The floor: parsing and re-encoding the same request with no memory at all, plus one embedding (the user
  message) and one pgvector query (top 5 over the turn's vectors so far, in the same Postgres). In-process: no HTTP.

The three take each turn in turn, so load on the machine falls on all alike. The scripted turns are
bench/hot_path.py's (a user message of ~120 tokens, a reply of ~250, every note ask answered).

Like with like: Lethe runs at a ceiling its conversation outgrows (6k by default; the warm-up turns already
pass it), so episodes fade and are forgotten and recall searches the graph for every new user message, as
mem0 searches every one. `--pause` waits between a report and the next user message (a person reading), outside
every timing: the lane then has the time to prepare the next walk, and the summary says how each recall block was
made (the gateway's `lethe_recall_blocks_total`).

    .venv/bin/python bench/side_by_side.py [--turns 200] [--warmup 20] [--ceiling 6000] [--pause 0]

Prints p50/p90/p99 per system, writes bench/results/side_by_side.json and bench/results/side_by_side.png.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project before bench/ (bench/providers.py)

from hot_path import Conversation, step_message  # noqa: E402
from stack import RESULTS, Stack, running_stack  # noqa: E402
from stats import summary  # noqa: E402

from providers.embedder import LocalEmbedder  # noqa: E402

DATABASE = "mem0_bench"
# A ceiling the scripted conversation (~370 tokens a turn) passes within twenty turns.
CEILING = 6000


class Floor:
    """No memory: the request parsed and encoded again, one embedding, one pgvector query."""

    def __init__(self, dsn: str, embedder: LocalEmbedder) -> None:
        import psycopg

        self.embedder = embedder
        self.conn = psycopg.connect(dsn, autocommit=True)
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.conn.execute("CREATE TABLE IF NOT EXISTS floor_vectors (id bigserial PRIMARY KEY, "
                          "embedding vector(384) NOT NULL)")
        self.conn.execute("CREATE INDEX IF NOT EXISTS floor_hnsw ON floor_vectors "
                          "USING hnsw (embedding vector_cosine_ops)")

    @staticmethod
    def _literal(vector: Any) -> str:
        return "[" + ",".join(f"{float(x):.6f}" for x in vector) + "]"

    def turn(self, body: bytes) -> float:
        """Milliseconds for the floor's work on this request."""
        started = time.perf_counter()
        request = json.loads(body)
        json.dumps(request).encode()
        vector = self.embedder.embed_sync([request["messages"][-1]["content"]])[0]
        self.conn.execute("SELECT id FROM floor_vectors ORDER BY embedding <=> %s::vector LIMIT 5",
                          (self._literal(vector),)).fetchall()
        took = (time.perf_counter() - started) * 1000
        # Kept for the next turn's query, as a memory would keep it; not timed, the floor stores nothing.
        self.conn.execute("INSERT INTO floor_vectors (embedding) VALUES (%s::vector)", (self._literal(vector),))
        return took


def _database(stack: Stack) -> str:
    import psycopg

    with psycopg.connect(stack.postgres_url(), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
            conn.execute(f"CREATE DATABASE {DATABASE}")
    from store.embedded import running_url

    return running_url(stack.data_dir / "postgres", DATABASE)


def _mem0(dsn: str, embedder: LocalEmbedder) -> Any:
    try:
        from peers.mem0_peer import Mem0Peer
    except ImportError as exc:  # the bench extra not installed: say so, measure the rest
        print(f"  mem0 not measured: {exc} (make install-bench)", flush=True)
        return None
    return Mem0Peer(dsn, embedder)


def recall_provenance(stack: Stack) -> dict[str, int]:
    """How the gateway's recall blocks were made so far, from its /metrics (`lethe dev` sets no metrics token)."""
    import httpx

    text = httpx.get(f"{stack.url}/metrics", timeout=30).text
    found = re.findall(r'^lethe_recall_blocks_total\{[^}]*provenance="([a-z]+)"[^}]*\} ([0-9.e+]+)$', text, re.M)
    return {provenance: int(float(count)) for provenance, count in found}


def run(stack: Stack, turns: int, warmup: int, *, ceiling: int, pause: float = 0.0) -> dict[str, Any]:
    """`ceiling`: the one the stack was started with (LETHE_CEILING_TOKENS), for the summary."""
    embedder = LocalEmbedder(threads=1)
    dsn = _database(stack)
    floor, mem0 = Floor(dsn, embedder), _mem0(dsn, embedder)
    times: dict[str, list[float]] = {"lethe": [], "lethe_server": [], "mem0": [], "floor": []}
    provenance_before: dict[str, int] = {}
    started = time.monotonic()
    with stack.client() as client:
        conversation = Conversation(client, "side-by-side")
        for i in range(warmup + turns):
            turn = conversation.turn + 1
            message = step_message(turn)
            body = json.dumps({"model": "gpt-4o-mini", "messages": [message]}).encode()
            floor_ms = floor.turn(body)
            before = time.perf_counter()
            d, r, _ = conversation.step()
            lethe_ms = (time.perf_counter() - before) * 1000
            reply = conversation.reply(turn, {"note_ask_turns": None, "estimated_tokens": 0})
            mem0_ms = None
            if mem0 is not None:
                before = time.perf_counter()
                mem0.search("side-by-side", message["content"], limit=5)
                mem0.add("side-by-side", [message, reply["choices"][0]["message"]])
                mem0_ms = (time.perf_counter() - before) * 1000
            if pause:
                time.sleep(pause)  # a person reading the reply: no system is timed meanwhile
            if i == warmup - 1:
                provenance_before = recall_provenance(stack)
            if i < warmup:
                continue
            times["floor"].append(floor_ms)
            times["lethe"].append(lethe_ms)
            times["lethe_server"].append(d + r)
            if mem0_ms is not None:
                times["mem0"].append(mem0_ms)
            if (i - warmup + 1) % 50 == 0:
                print(f"  side by side: {i - warmup + 1}/{turns} turns ({time.monotonic() - started:.0f} s)",
                      flush=True)
    if mem0 is not None:
        mem0.close()
    after = recall_provenance(stack)
    blocks = {k: after.get(k, 0) - provenance_before.get(k, 0) for k in after}
    state = stack.client().get("/v1/memories/side-by-side").json()
    result = {
        "turns": turns, "warmup": warmup, "recall_setting": "LETHE_RECALL=1",
        "ceiling": ceiling, "pause_seconds": pause,
        # How the measured turns' recall was made: prepared (the lane's walk), inline, hits, partial, none.
        "recall_provenance": blocks,
        # The memory outgrew its ceiling: most of its episodes are forgotten, only the graph holds them.
        "episodes_by_state": {st: sum(e["state"] == st for e in state["episodes"])
                              for st in sorted({e["state"] for e in state["episodes"]})},
        "systems": {
            "Lethe decorate+report (client)": summary(times["lethe"]),
            "Lethe decorate+report (server)": summary(times["lethe_server"]),
            "mem0 search+add": summary(times["mem0"]) if times["mem0"] else None,
            "floor: parse+encode, 1 embedding, 1 pgvector query": summary(times["floor"]),
        },
        "mem0_llm_calls": getattr(mem0, "llm_calls", None),
        "slowest_call_ms": round(conversation.slowest_ms, 1), "slowest_call": conversation.slowest_call,
    }
    lethe, peer = result["systems"]["Lethe decorate+report (client)"], result["systems"]["mem0 search+add"]
    result["lethe_p50_over_mem0_p50"] = round(lethe["p50"] / peer["p50"], 2) if peer else None
    for name, row in result["systems"].items():
        if row:
            print(f"  {name:<52} p50 {row['p50']:>8} ms  p90 {row['p90']:>8} ms  p99 {row['p99']:>8} ms", flush=True)
    return result


def write(result: dict[str, Any]) -> None:
    from plots import plot_side_by_side

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "side_by_side.json").write_text(json.dumps(result, indent=2) + "\n")
    plot_side_by_side(result, RESULTS / "side_by_side.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--ceiling", type=int, default=CEILING,
                        help="Lethe's ceiling: one the conversation outgrows, so recall has a memory to search")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between a report and the next user message (0: back to back)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with running_stack("lethe-bench-side-", LETHE_RECALL="1", LETHE_CEILING_TOKENS=str(args.ceiling)) as stack:
        write(run(stack, args.turns, args.warmup, ceiling=args.ceiling, pause=args.pause))


if __name__ == "__main__":
    main()
