"""Decorate and report latency against memory size, over real HTTP, at the default ceiling and at 32k.

For each ceiling, starts `lethe dev` on free ports with a throwaway data directory (bench/stack.py) and grows
one memory per size through the API itself: a documented bulk import, past turns sent many to a decorate with
`X-Lethe-Now` ten minutes apart (as an agent importing a transcript would), a scripted model answering every note
ask, then the last 200 messages turn by turn at the real time. It waits for the lane to catch up (the worker's
CPU going quiet, at most `--settle` seconds), then times decorate and report for further turns, one turn of each
memory after another, each sending only its new message: server time from the gateway's `Server-Timing` header,
and the client's time.

    .venv/bin/python bench/hot_path.py [--sizes 1000 10000 100000] [--ceilings 0 32000] [--samples 200] \
        [--recall on|off] [--facts N] [--think SECONDS]

`--facts N` gives each grown memory N more facts in its graph before the timing (written straight into it as
`bench/hot_path_recall.py` writes them, each with its note's embedding: what a long memory's lane would have
put there), so recall on against recall off compares decorates with a large graph to search. `--think S`
pauses S seconds after each timed turn, as the model's next call and the user's next message would: the lane
then prepares recall's walk for the next message, which back-to-back turns never give it time to do.

(ceiling 0 is the default, LETHE_CEILING_TOKENS unset). Prints a table, writes bench/results/hot_path.json and
bench/results/hot_path.png (latency against size, log scale).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.append(str(Path(__file__).resolve().parent))

from stack import RESULTS, Stack, running_stack, wait_for_lane  # noqa: E402
from stats import summary  # noqa: E402

FILLER = "The rollout plan keeps the pricing table, the refund line and the tax rates in step across regions. "
DEFAULT_CEILING = 200_000


def note_call(turns: list[int]) -> dict[str, Any]:
    first, last = turns
    notes = [{"note": f"Turns {first}-{last} settled ticket LTH-{first} at {first * 17} units.",
              "subject": f"ticket LTH-{first}", "object": f"{first * 17} units", "milestone": False}]
    return {"id": f"call_note_{first}_{last}", "type": "function",
            "function": {"name": "note", "arguments": json.dumps({"notes": notes})}}


def import_history(turn: int, turns: int) -> tuple[list[dict[str, Any]], int]:
    """`turns` past turns and a new user message, as an agent importing a transcript would send them;
    returns them with the number of the new turn."""
    history: list[dict[str, Any]] = []
    for _ in range(turns):
        turn += 1
        history += [{"role": "user", "content": f"Turn {turn}: status of LTH-{turn}? " + FILLER * 4},
                    {"role": "assistant", "content": f"LTH-{turn} is with Dana. " + FILLER * 9}]
    turn += 1
    history.append({"role": "user", "content": f"Turn {turn}: and now? " + FILLER * 4})
    return history, turn


def step_message(turn: int) -> dict[str, Any]:
    # Sizes of a working agent's turns: a user message of ~120 tokens, a reply of ~250.
    return {"role": "user", "content": (f"Turn {turn}: where does ticket LTH-{turn} stand, and who owns the "
                                        f"follow-up? Keep {turn * 17} units exact. " + FILLER * 4)}


def reply_message(turn: int, answer: dict[str, Any]) -> dict[str, Any]:
    """The scripted model's reply to a decorated request: it answers every note ask."""
    message: dict[str, Any] = {"role": "assistant", "content": (
        f"LTH-{turn} is with Dana; review on day {turn % 28 + 1}. " + FILLER * 9)}
    if answer["note_ask_turns"]:
        message["tool_calls"] = [note_call(answer["note_ask_turns"])]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 30}}


class Conversation:
    """One memory, driven turn by turn: a user message, decorate, a scripted reply, report. Keeps the client's
    time of every call it made, imports included, so a run can say its slowest call."""

    def __init__(self, client: httpx.Client, memory_id: str,
                 reply: Callable[[int, dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.client, self.memory_id, self.turn = client, memory_id, 0
        self.reply = reply or reply_message
        self.slowest_ms, self.slowest_call = 0.0, ""
        self.calls = 0

    def _post(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        started = time.perf_counter()
        response = self.client.post(f"/v1/memories/{self.memory_id}/{path}", json=body, headers=headers)
        took = (time.perf_counter() - started) * 1000
        if took > self.slowest_ms:
            self.slowest_ms, self.slowest_call = took, f"{path} at turn {self.turn}"
        self.calls += 1
        if response.status_code != 200:
            raise SystemExit(f"{path} of {self.memory_id} at turn {self.turn}: {response.status_code} "
                             f"{response.text[:500]}")
        return response

    def call(self, history: list[dict[str, Any]], at: datetime | None = None
             ) -> tuple[httpx.Response, httpx.Response, dict[str, Any]]:
        """Decorate, the scripted reply, report: both answers and the reply."""
        headers = {"X-Lethe-Now": at.isoformat()} if at else {}
        decorated = self._post("decorate", {"model": "gpt-4o-mini", "messages": history}, headers)
        answer = decorated.json()
        reply = self.reply(self.turn, answer)
        reported = self._post("report", {"decorate_id": answer["decorate_id"], "response": reply}, headers)
        return decorated, reported, reply

    def import_turns(self, turns: int, at: datetime | None = None) -> int:
        """Grow the memory fast: one decorate carrying many past turns, then its report. Returns how many
        messages that stored."""
        history, self.turn = import_history(self.turn, turns)
        reply = self.call(history, at)[2]
        return len(history) + 1 + len(reply["choices"][0]["message"].get("tool_calls") or [])

    def say(self, message: dict[str, Any], at: datetime | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        """One live turn with this user message: decorate's answer and the scripted reply."""
        self.turn += 1
        decorated, _, reply = self.call([message], at)
        return decorated.json(), reply

    def step(self) -> tuple[float, float, int]:
        self.turn += 1
        decorated, reported, reply = self.call([step_message(self.turn)])
        return server_ms(decorated), server_ms(reported), 2 + len(reply["choices"][0]["message"].get("tool_calls")
                                                                  or [])


def server_ms(response: httpx.Response) -> float:
    return float(response.headers["Server-Timing"].split("dur=")[1].split(",")[0])


def grow(conversation: Conversation, size: int, per_call: int, tail: int = 200) -> int:
    """Bulk-import until the memory holds about `size` messages, the last `tail` turn by turn at the real time.
    The imported turns are dated ten minutes a call apart, ending an hour ago. Returns messages stored."""
    calls = max(0, size - tail) // (2 * per_call + 2) + 1
    at = datetime.now(UTC) - timedelta(hours=1) - timedelta(minutes=10 * calls)
    stored = 0
    while stored < size - tail:
        at += timedelta(minutes=10)
        stored += conversation.import_turns(min(per_call, max(1, (size - tail - stored) // 2)), at)
    while stored < size:  # the last stretch turn by turn, so recent turns look like live ones
        stored += conversation.step()[2]
    return stored


def add_facts(stack: Stack, memory_ids: list[str], count: int) -> None:
    """`count` facts straight into each memory's graph (see the module's docstring)."""
    import asyncio

    from hot_path_recall import _add_facts
    from sqlalchemy import text

    from store.db import Database

    async def write() -> None:
        db = Database(stack.postgres_url().replace("postgresql://", "postgresql+asyncpg://", 1))
        try:
            for seed, memory_id in enumerate(memory_ids, start=1):
                async with db.session() as session:
                    tenant = (await session.execute(text("SELECT tenant_id FROM memories WHERE memory_id = :m"),
                                                    {"m": memory_id})).scalar_one()
                await _add_facts(db, tenant, memory_id, count, seed=seed)
        finally:
            await db.dispose()

    asyncio.run(write())


def run(stack: Stack, sizes: list[int], samples: int, ceiling: int, settle: float = 20,
        tail: int = 200, facts: int = 0, think: float = 0.0) -> list[dict[str, Any]]:
    """Grow one memory per size, then time them turn by turn across the memories."""
    conversations: dict[int, Conversation] = {}
    grown: dict[int, dict[str, float]] = {}
    with stack.client() as client:
        for size in sizes:
            conversation = conversations[size] = Conversation(client, f"hot-{ceiling}-{size}")
            started = time.monotonic()
            # An import call stays inside the ceiling (a turn here is ~270 tokens).
            grow(conversation, size, per_call=max(10, min(200, ceiling // 300)), tail=tail)
            grown[size] = {"grow_seconds": round(time.monotonic() - started, 1),
                           "slowest_import_ms": round(conversation.slowest_ms, 1)}
            print(f"  ceiling {ceiling}: grew {size:,} messages in {grown[size]['grow_seconds']} s "
                  f"(slowest call {conversation.slowest_ms:.0f} ms, {conversation.slowest_call})", flush=True)
            conversation.slowest_ms, conversation.slowest_call = 0.0, ""  # from here on: the timed turns
        if facts:
            add_facts(stack, [c.memory_id for c in conversations.values()], facts)
            print(f"  ceiling {ceiling}: {facts:,} facts added to each memory's graph", flush=True)
        lane_s = wait_for_lane(stack, settle)
        times = {size: {"decorate": [], "report": [], "turn": []} for size in sizes}
        # Turn by turn across the memories: the machine's load falls on every size alike, and each memory's
        # next message comes after the other memories' turns (and `think`), as a user's reply would come
        # after reading, not in the same millisecond as the report.
        for _ in range(samples):
            for size in sizes:
                before = time.perf_counter()
                d, r, _ = conversations[size].step()
                times[size]["turn"].append((time.perf_counter() - before) * 1000)
                times[size]["decorate"].append(d)
                times[size]["report"].append(r)
                time.sleep(think)
        rows = []
        for size in sizes:
            conversation = conversations[size]
            state = client.get(f"/v1/memories/{conversation.memory_id}").json()
            row = {
                "ceiling": ceiling, "size": size, "stored_messages": state["messages"],
                "episodes": len(state["episodes"]), "facts": state["facts"], **grown[size],
                "lane_catch_up_seconds": round(lane_s, 1), "lane_caught_up": lane_s < settle,
                "decorate_ms": summary(times[size]["decorate"]), "report_ms": summary(times[size]["report"]),
                # Decorate and report of one turn as the agent waits for them: both round trips, client side.
                "turn_client_ms": summary(times[size]["turn"]),
                "slowest_call_ms": round(conversation.slowest_ms, 1), "slowest_call": conversation.slowest_call,
                # How each stored recall block was made: `prepared` (the lane's walk was ready), `inline`, ...
                "recall_provenance": dict(Counter(b["provenance"] for b in state.get("recall_blocks") or [])),
            }
            rows.append(row)
            d, r = row["decorate_ms"], row["report_ms"]
            print(f"  ceiling {ceiling}: {row['stored_messages']:>6} messages ({row['episodes']} episodes, "
                  f"{row['facts']} facts): decorate p50 {d['p50']} p90 {d['p90']} p99 {d['p99']} max {d['max']} ms; "
                  f"report p50 {r['p50']} p99 {r['p99']} ms; slowest timed call {row['slowest_call_ms']} ms; "
                  f"recall blocks {row['recall_provenance']}",
                  flush=True)
    return rows


def verdict(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's targets: p50 at the largest size at most 1.2x the smallest's, p99 at most 3x p50, no call
    over 1 s."""
    out: dict[str, Any] = {}
    for ceiling in sorted({r["ceiling"] for r in rows}):
        mine = sorted((r for r in rows if r["ceiling"] == ceiling), key=lambda r: r["size"])
        ratio = mine[-1]["decorate_ms"]["p50"] / mine[0]["decorate_ms"]["p50"]
        out[str(ceiling)] = {
            "p50_ratio_largest_to_smallest": round(ratio, 2),
            "p99_over_p50": {str(r["size"]): round(r["decorate_ms"]["p99"] / r["decorate_ms"]["p50"], 2)
                             for r in mine},
            "slowest_call_ms": max(r["slowest_call_ms"] for r in mine),
            "slowest_import_ms": max(r["slowest_import_ms"] for r in mine),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--ceilings", type=int, nargs="+", default=[0, 32000])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--settle", type=float, default=20, help="longest wait for the lane before timing")
    parser.add_argument("--recall", choices=["on", "off"], default="on",
                        help="recall for each new user message (LETHE_RECALL); off times decorate without it")
    parser.add_argument("--facts", type=int, default=0, help="facts added to each memory's graph before timing")
    parser.add_argument("--think", type=float, default=0.0, help="seconds between one timed turn and the next")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for ceiling in args.ceilings:
        env = {"LETHE_RECALL": "true" if args.recall == "on" else "false"}
        if ceiling:
            env["LETHE_CEILING_TOKENS"] = str(ceiling)
        with running_stack("lethe-bench-hot-", **env) as stack:
            rows += run(stack, args.sizes, args.samples, ceiling or DEFAULT_CEILING, args.settle, facts=args.facts,
                        think=args.think)
    write(rows, args.samples)


def write(rows: list[dict[str, Any]], samples: int) -> dict[str, Any]:
    from plots import plot_hot_path

    results = {"samples": samples, "machine": {"cpus": os.cpu_count()}, "rows": rows, "verdict": verdict(rows)}
    print(json.dumps(results["verdict"], indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "hot_path.json").write_text(json.dumps(results, indent=2) + "\n")
    plot_hot_path(rows, RESULTS / "hot_path.png")
    return results


if __name__ == "__main__":
    main()
