"""Across conversations: is what a user said weeks ago, in another conversation, in front of the model?

Plays one user's twenty conversations, a week apart (bench/cross_conversation_script.py: 40 planted facts, 8 of
them changed later, 40 questions in the last ten conversations about earlier ones), through decorate/report on
`lethe dev` with the user named (`X-Lethe-User`), at a small ceiling and with the conversations' own clock. The
bench is the agent and a perfect note-taker (every note ask answered with the facts of the turns asked for, as
the user's words). Between conversations it waits for the lanes to catch up (the user's graph included).

mem0 runs beside it in the same process on the same conversations, scoped by `user_id` (infer off, the same
embedder, pgvector on the stack's own Postgres): every message added, each question searched (top 5) and put in
front of the current conversation's newest messages, up to the same ceiling.

    .venv/bin/python bench/cross_conversation.py [--seed 21] [--ceiling 4000] [--no-mem0]

Prints, per system: the share of questions whose answer is in front of the model, and how often a changed
fact's old value is shown without the new one; writes bench/results/cross_conversation.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from cross_conversation_script import Script, generate  # noqa: E402
from recall_baselines import _mem0_peer  # noqa: E402
from recall_conversation import Question, Turn  # noqa: E402
from recall_scoring import Tally, current_recall_block, request_texts, sentences, shows  # noqa: E402
from stack import RESULTS, cpu_facts, start_clocked_stack, stop_stack, write_result  # noqa: E402

from providers.embedder import LocalEmbedder  # noqa: E402
from providers.tokens import TiktokenCounter  # noqa: E402

MODEL = "gpt-4o-mini"
USER = "bench-user"
TOP = 5


def _stamp(turn: Turn, offset: float = 0.0) -> dict[str, str]:
    return {"X-Lethe-Now": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(turn.at.timestamp() + offset))}


class LetheUser:
    """The user's conversations on the stack, one memory each, driven turn by turn."""

    def __init__(self, client: httpx.Client, script: Script, database_url: str) -> None:
        self.client, self.script, self.database_url = client, script, database_url
        self.notes_asked = 0

    def memory(self, turn: Turn) -> str:
        return f"cc-{self.script.memory_of(turn.number) + 1:02d}"

    def _notes(self, turn: Turn, asked: list[int]) -> list[dict[str, Any]]:
        first = self.script.spans[self.script.memory_of(turn.number)][0]
        lo, hi = first + asked[0] - 1, first + asked[1] - 1
        notes = [{"note": f.note, "subject": f.subject, "object": f.object, "milestone": False, "source": "user"}
                 for f in self.script.conversation.facts.values() if lo <= f.turn <= hi]
        return notes or [{"note": "", "subject": "", "object": "", "milestone": False}]

    def _reply(self, turn: Turn, answer: dict[str, Any], content: str,
               tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        calls = list(tool_calls or [])
        if answer.get("note_ask_turns"):
            self.notes_asked += 1
            asked = answer["note_ask_turns"]
            calls.append({"id": f"call_note_{secrets.token_hex(4)}", "type": "function", "function": {
                "name": "note", "arguments": json.dumps({"notes": self._notes(turn, asked)})}})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
                "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 40}}

    def _call(self, turn: Turn, messages: list[dict[str, Any]], offset: float) -> dict[str, Any]:
        response = self.client.post(f"/v1/memories/{self.memory(turn)}/decorate",
                                    headers={**_stamp(turn, offset), "X-Lethe-User": USER},
                                    json={"model": MODEL, "messages": messages})
        response.raise_for_status()
        return response.json()

    def _report(self, turn: Turn, answer: dict[str, Any], response: dict[str, Any], offset: float) -> None:
        self.client.post(f"/v1/memories/{self.memory(turn)}/report",
                         headers={**_stamp(turn, offset), "X-Lethe-User": USER},
                         json={"decorate_id": answer["decorate_id"], "response": response}).raise_for_status()

    def turn(self, turn: Turn) -> tuple[dict[str, Any], float]:
        """Plays one turn; returns the request decorated for its user message and that decorate's time (ms)."""
        started = time.perf_counter()
        first = self._call(turn, [{"role": "user", "content": turn.user}], 0)
        took = (time.perf_counter() - started) * 1000
        if turn.tool is None:
            self._report(turn, first, self._reply(turn, first, turn.reply), 20)
            return first, took
        call_id = f"call_logs_{turn.number}"
        logs = {"id": call_id, "type": "function", "function": {"name": "read_logs", "arguments": "{}"}}
        self._report(turn, first, self._reply(turn, first, "Reading the logs.", [logs]), 10)
        second = self._call(turn, [{"role": "tool", "tool_call_id": call_id, "content": turn.tool}], 30)
        self._report(turn, second, self._reply(turn, second, turn.reply), 40)
        return first, took

    def wait_for_lanes(self, timeout: float) -> float:
        """Until every memory's events are processed and every fact is in its graph (the user's included)."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if asyncio.run(_pending(self.database_url)) == 0:
                break
            time.sleep(0.5)
        return time.monotonic() - started


async def _in_graph(database_url: str, facts: list[Any]) -> list[str]:
    """Where each answer fact stands in the user's graph when its question is asked (a miss's first clue): in
    force and integrated, retired, merged, not integrated yet, or absent; and whether a passage of the graph holds
    its words."""
    connection = await asyncpg.connect(database_url)
    try:
        out = []
        for fact in facts:
            rows = await connection.fetch(
                "SELECT f.retired_at, f.merged_into, f.integrated_at, f.origin_memory_id FROM facts f "
                "JOIN memories m ON m.id = f.memory_pk WHERE m.memory_id = $1 AND f.note = $2",
                f"~user:{USER}", fact.note)
            passages = await connection.fetchval(
                "SELECT count(*) FROM passages p JOIN memories m ON m.id = p.memory_pk "
                "WHERE m.memory_id = $1 AND p.text ILIKE '%' || $2 || '%' AND p.text ILIKE '%' || $3 || '%'",
                f"~user:{USER}", fact.keys[0], fact.keys[1])
            states = [("retired" if r["retired_at"] else "merged" if r["merged_into"] else
                       "in force" if r["integrated_at"] else "not integrated") + f" (from {r['origin_memory_id']})"
                      for r in rows]
            out.append(f"{fact.id}: {', '.join(states) or 'absent'}; {passages} passage(s)")
        return out
    finally:
        await connection.close()


async def _pending(database_url: str) -> int:
    connection = await asyncpg.connect(database_url)
    try:
        events = await connection.fetchval("SELECT count(*) FROM outbox WHERE processed_at IS NULL")
        facts = await connection.fetchval("SELECT count(*) FROM facts WHERE integrated_at IS NULL")
        return int(events) + int(facts)
    finally:
        await connection.close()


class Mem0User:
    """mem0 scoped by user: every message added under the user's id; a question searched across all of them."""

    def __init__(self, script: Script, peer: Any, counter: Any, ceiling: int) -> None:
        self.script, self.peer, self.counter, self.ceiling = script, peer, counter, ceiling
        self.tally = Tally("mem0", script.conversation)
        self.current: list[tuple[dict[str, Any], int]] = []  # this conversation's messages and their sizes
        self.ms: dict[str, list[float]] = {"add": [], "search": []}
        self._empty = counter.count_request({"model": MODEL, "messages": []})

    def _size(self, message: dict[str, Any]) -> int:
        return self.counter.count_request({"model": MODEL, "messages": [message]}) - self._empty

    def add_turn(self, turn: Turn) -> None:
        if self.script.local(turn.number) == 1:
            self.current = []
        new = [{"role": "user", "content": turn.user}]
        if turn.tool is not None:
            new.append({"role": "tool", "content": turn.tool})
        new.append({"role": "assistant", "content": turn.reply})
        started = time.perf_counter()
        self.peer.add(USER, new)
        self.ms["add"].append((time.perf_counter() - started) * 1000)
        self.current += [(m, self._size(m)) for m in new]

    def question(self, question: Question) -> None:
        if self.script.local(question.turn) == 1:
            self.current = []
        started = time.perf_counter()
        found = self.peer.search(USER, question.text, limit=TOP)
        self.ms["search"].append((time.perf_counter() - started) * 1000)
        asked = {"role": "user", "content": question.text}
        head = [{"role": "system", "content": "Memories of this user:\n" + "\n".join(found)}] if found else []
        room = self.ceiling - self._empty - sum(self._size(m) for m in (*head, asked))
        kept: list[dict[str, Any]] = []
        for message, size in reversed(self.current):
            if size > room:
                break
            room -= size
            kept.insert(0, message)
        self.tally.question(question, request_texts([*head, *kept, asked]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--ceiling", type=int, default=4000)
    parser.add_argument("--no-mem0", action="store_true", help="leave the mem0 peer out")
    parser.add_argument("--keep", action="store_true",
                        help="leave the stack running at the end (its database to look into; stop it yourself)")
    args = parser.parse_args()
    counter = TiktokenCounter()
    script = generate(seed=args.seed, count_tokens=counter.count_text)
    conversation = script.conversation
    questions = {q.turn: q for q in conversation.questions}
    lethe = Tally("lethe", conversation)
    stack, data_dir, admin = start_clocked_stack("lethe-bench-cross-", args.ceiling)
    started = time.monotonic()
    mem0: Mem0User | None = None
    waited = 0.0
    decorate_ms: list[float] = []
    blocks = {"question turns with a block": 0, "questions": len(questions)}
    per_question: list[dict[str, Any]] = []
    try:
        with httpx.Client(base_url=stack.url, timeout=120) as client:
            made = client.post("/v1/admin/tenants", json={"name": f"cross-bench-{secrets.token_hex(4)}"},
                               headers={"Authorization": f"Bearer {admin}"})
            made.raise_for_status()
            client.headers["Authorization"] = f"Bearer {made.json()['api_key']}"
            user = LetheUser(client, script, stack.postgres_url())
            if not args.no_mem0:
                mem0 = Mem0User(script, _mem0_peer(data_dir / "state" / "postgres", LocalEmbedder(threads=1)),
                                counter, args.ceiling)
            for turn in conversation.turns:
                if script.local(turn.number) == 1 and turn.number > 1:
                    waited += user.wait_for_lanes(120)  # a week later: the lanes have long caught up
                    print(f"conversation {script.memory_of(turn.number) + 1}/{len(script.spans)} "
                          f"({time.monotonic() - started:.0f} s)", flush=True)
                question = questions.get(turn.number)
                if question is not None and mem0 is not None:
                    mem0.question(question)
                answer, took = user.turn(turn)
                decorate_ms.append(took)
                if question is not None:
                    messages = answer["request"].get("messages") or []
                    texts = request_texts(messages)
                    lethe.question(question, texts)
                    block = current_recall_block(messages)
                    blocks["question turns with a block"] += block is not None
                    said = sentences(texts)
                    missing = [conversation.facts[f] for f in question.answers
                               if not shows(said, conversation.facts[f])]
                    row = {"question": question.id, "conversation": script.memory_of(turn.number) + 1,
                           "turn": script.local(turn.number), "kind": question.kind, "text": question.text,
                           "answered": not missing, "block": block is not None,
                           "answer_from": [script.memory_of(conversation.facts[f].turn) + 1 for f in question.answers]}
                    if missing:
                        row["graph"] = asyncio.run(_in_graph(user.database_url, missing))
                        row["block_text"] = block
                        print(f"  miss {question.id} (conversation {row['conversation']}, turn {row['turn']}, "
                              f"{question.kind}, block {'yes' if block else 'no'}): {question.text!r}; "
                              f"{'; '.join(row['graph'])}", flush=True)
                    per_question.append(row)
                if mem0 is not None:
                    mem0.add_turn(turn)
            found = client.get(f"/v1/users/{USER}")
            profile = found.json() if found.is_success else None
    finally:
        if mem0 is not None:
            mem0.peer.close()
        if not args.keep:
            stop_stack(stack)
            shutil.rmtree(data_dir, ignore_errors=True)

    systems = {"lethe": lethe.summary()["all"]}
    if mem0 is not None:
        systems["mem0 (user_id)"] = mem0.tally.summary()["all"]
    results: dict[str, Any] = {
        "seed": args.seed, "ceiling_tokens": args.ceiling, "conversations": len(script.spans),
        "turns": len(conversation.turns), "questions": len(conversation.questions),
        "planted_facts": sum(f.replaces is None for f in conversation.facts.values()),
        "changed_facts": sum(f.replaces is not None for f in conversation.facts.values()),
        "seconds": round(time.monotonic() - started, 1), "lane_wait_seconds": round(waited, 1),
        "note_asks_answered": user.notes_asked, "recall_blocks": blocks,
        "lethe_decorate_ms": {"p50": round(statistics.median(decorate_ms), 1),
                              "p99": round(statistics.quantiles(decorate_ms, n=100)[98], 1)},
        "mem0_ms_p50": ({k: round(statistics.median(v), 1) for k, v in mem0.ms.items() if v} if mem0 else None),
        "user": profile, "systems": systems, "machine": cpu_facts(), "per_question": per_question,
    }
    print(f"\n{'system':<16} {'questions':>9} {'in front':>9} {'old alone':>10}")
    for name, row in systems.items():
        share = row["answer_in_front"]
        print(f"{name:<16} {row['questions']:>9} {share * 100 if share is not None else 0:>8.0f}% "
              f"{row['old_value_alone_count']:>5}/{row['changed_facts_asked']}")
    print(f"\n{results['turns']} turns in {results['conversations']} conversations, ceiling {args.ceiling}; "
          f"{results['seconds']} s (lane waits {results['lane_wait_seconds']} s); recall blocks: {blocks}; "
          f"Lethe decorate {results['lethe_decorate_ms']} ms; mem0 {results['mem0_ms_p50']} ms p50")
    print(f"machine: {results['machine']}")
    write_result(RESULTS / "cross_conversation.json", results)
    if args.keep:
        print(f"stack kept: gateway {stack.url}, Postgres {stack.postgres_url()}; Ctrl-C (SIGINT to pid "
              f"{os.getpid()}) stops it", flush=True)
        try:
            stack.proc.wait()
        except KeyboardInterrupt:
            pass
        finally:
            stop_stack(stack)
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
