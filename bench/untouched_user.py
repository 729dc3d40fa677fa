"""Messages that touch nothing, against a user's graph (issue #37): how many recall blocks a conversation of a
user places for 100 messages about something else entirely, when the user's graph holds 1,000 facts from their
other conversations and the conversation itself holds nothing. Target: at most 5.

The facts and messages are those of `bench/untouched.py`. The facts are written to a conversation through the
facts API and integrated by its lane; that memory is then made the user's graph in the tables (the graph's own
feed is the binding's work), and its prepared walk dropped, so every block comes from the message's own search
of the user's graph. The talking memory names the user (`X-Lethe-User`) and is bound in the tables as well.

    .venv/bin/python bench/untouched_user.py [--facts 1000] [--messages 100] [--pause 0.5]

A control message that repeats one fact is asked last (not counted): it shows recall of the user's graph did
run in time. The user's graph has no walk prepared ahead, so its recall is inline; on a loaded 2-core machine
a graph of 1,000 facts needs more than the default 150 ms (`LETHE_RECALL_INLINE_DEADLINE_MS=400` does).

Prints the blocks placed with their provenance and writes bench/results/untouched_user.json.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stack import RESULTS, cpu_facts, running_stack, wait_for_lane, write_result  # noqa: E402
from untouched import MODEL, TARGET, facts, messages  # noqa: E402

SOURCE = "untouched-user-source"
MEMORY = "untouched-user-bench"
USER = "bench-user"


def _turn(client: Any, history: list[dict[str, Any]], text: str, turn: int, named: bool = True) -> None:
    # The first call names no one: the facts' memory becomes the user's graph in the tables, and the binding
    # would otherwise make an empty graph of that name first.
    headers = {"X-Lethe-User": USER} if named else {}
    history.append({"role": "user", "content": text})
    answer = client.post(f"/v1/memories/{MEMORY}/decorate", headers=headers,
                         json={"model": MODEL, "messages": history}).raise_for_status().json()
    reply = {"role": "assistant", "content": f"Happy to help with that ({turn})."}
    client.post(f"/v1/memories/{MEMORY}/report", headers=headers, json={
        "decorate_id": answer["decorate_id"],
        "response": {"choices": [{"message": reply, "finish_reason": "stop"}]}}).raise_for_status()
    history.append(reply)


def _make_user_graph(url: str) -> None:
    """The facts' memory becomes the user's graph, and the talking memory the user's conversation."""
    with psycopg.connect(url, autocommit=False) as conn, conn.cursor() as cur:
        cur.execute("UPDATE memories SET memory_id = %s, kind = 'user_graph' WHERE memory_id = %s "
                    "RETURNING id, tenant_id", (f"~user:{USER}", SOURCE))
        graph_pk, tenant_id = cur.fetchone()  # type: ignore[misc]
        cur.execute("DELETE FROM recall_walks WHERE memory_pk = %s", (graph_pk,))
        cur.execute("INSERT INTO users (tenant_id, user_id, graph_memory_pk) VALUES (%s, %s, %s) "
                    "ON CONFLICT (tenant_id, user_id) DO UPDATE SET graph_memory_pk = EXCLUDED.graph_memory_pk "
                    "RETURNING id", (tenant_id, USER, graph_pk))
        user_pk = cur.fetchone()[0]  # type: ignore[index]
        cur.execute("UPDATE memories SET user_pk = %s WHERE tenant_id = %s AND memory_id = %s",
                    (user_pk, tenant_id, MEMORY))
        conn.commit()


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with running_stack("lethe-bench-untouched-user-") as stack, stack.client() as client:
        started = time.monotonic()
        client.post(f"/v1/memories/{SOURCE}/decorate", json={"model": MODEL, "messages": [
            {"role": "user", "content": "Hello!"}]}).raise_for_status()
        written = facts(args.facts, rng)
        for fact in written:
            client.post(f"/v1/memories/{SOURCE}/facts", json=fact).raise_for_status()
        wait_for_lane(stack, timeout=1800)
        print(f"  {args.facts} facts written and integrated in {time.monotonic() - started:.0f} s", flush=True)
        history: list[dict[str, Any]] = [{"role": "system", "content": "You are a friendly assistant."}]
        _turn(client, history, "Hello!", 0, named=False)  # the memory is made by its first call, then bound
        _make_user_graph(stack.postgres_url())
        placed: Counter[str] = Counter()
        shown: list[dict[str, Any]] = []
        for turn, text in enumerate(messages(args.messages, rng), start=1):
            _turn(client, history, text, turn)
            time.sleep(args.pause)
        state = client.get(f"/v1/memories/{MEMORY}").raise_for_status().json()
        # A control, not counted: a message that does touch a fact of the user's graph gets its block.
        control = written[len(written) // 2]
        _turn(client, history, f"Is this still right? {control['note']}", args.messages + 1)
        after = client.get(f"/v1/memories/{MEMORY}").raise_for_status().json()
        control_placed = len(after["recall_blocks"]) > len(state["recall_blocks"])
        for block in state["recall_blocks"]:
            placed[block["provenance"]] += 1
            shown.append({"turn": block["turn"], "provenance": block["provenance"], "facts": len(block["fact_ids"]),
                          "passages": len(block["passage_ids"])})
    return {"user_graph_facts": args.facts, "messages": args.messages, "pause_seconds": args.pause,
            "blocks_placed": sum(placed.values()), "by_provenance": dict(placed), "blocks": shown,
            "control": control["note"], "control_block_placed": control_placed, "target_at_most": TARGET,
            "inline_deadline_ms": os.environ.get("LETHE_RECALL_INLINE_DEADLINE_MS", "default"),
            "machine": cpu_facts()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between a report and the next message")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--out", default=str(RESULTS / "untouched_user.json"))
    args = parser.parse_args()
    results = run(args)
    m = results["machine"]
    print(f"\n{results['messages']} messages that touch nothing, a user graph of {results['user_graph_facts']} "
          f"facts, {results['pause_seconds']} s between turns:")
    print(f"  recall blocks placed: {results['blocks_placed']} (target at most {TARGET}) "
          f"{results['by_provenance'] or ''}")
    print(f"  control (a message touching one of the facts) got its block: {results['control_block_placed']}")
    print(f"  on {m['cpus']} cores, {m['cpu_model']}, flags {' '.join(m['cpu_flags']) or 'none'}")
    write_result(args.out, results)


if __name__ == "__main__":
    main()
