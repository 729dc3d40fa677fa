"""Recall: is a forgotten fact in front of the model when the conversation asks about it again?

Generates a multi-week conversation (bench/recall_conversation.py: planted facts, later changes, chatter and tool
outputs, questions long after their facts left the view), starts `lethe dev` on free ports with its own data
directory and a small ceiling, and plays it through decorate/report with the clock of the conversation
(`X-Lethe-Now`). The bench is the agent and a perfect note-taker: every note ask is answered with the facts of
the turns asked for. At each question it looks at the decorated request: is the answer there (facts block,
history in view, recall block)? The same conversation is scored for truncation (newest messages up to the
ceiling), plain vector search over all messages (top 5, same embedder, numpy) and mem0 (infer off, same embedder,
on the stack's own Postgres with pgvector), each with the newest messages filling the rest of the ceiling.

    .venv/bin/python bench/recall.py [--quick] [--seed 7] [--ceiling 6000] [--no-mem0] [--pause 1] \
        [--lane-wait-budget 0]

`--lane-wait-budget 0` sends every turn at once after the last (no wait for the lane before questions);
`--pause S` waits S seconds after each turn. `taskset -c 0` before it pins the whole stack to one core.

Prints, per question kind, the share of questions whose answer is in front of the model, how often a changed
fact's old value is shown without the new one, recall block tokens (p50/p90) and the block's precision; writes
bench/results/recall.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from recall_baselines import Baselines  # noqa: E402
from recall_conversation import Conversation, Fact, Turn, generate  # noqa: E402
from recall_diagnosis import Diagnosis  # noqa: E402
from recall_scoring import Tally, current_recall_block, request_texts, sentences, shows  # noqa: E402
from stack import RESULTS, cpu_facts, start_clocked_stack, stop_stack  # noqa: E402

from providers.embedder import LocalEmbedder  # noqa: E402
from providers.tokens import TiktokenCounter  # noqa: E402

MODEL = "gpt-4o-mini"
MEMORY = "recall-bench"


def _notes(conversation: Conversation, turns: list[int]) -> list[dict[str, Any]]:
    first, last = turns
    notes = [{"note": f.note, "subject": f.subject, "object": f.object, "milestone": False, "source": "user"}
             for f in conversation.facts.values() if first <= f.turn <= last]
    return notes or [{"note": "", "subject": "", "object": "", "milestone": False}]


def _reply(conversation: Conversation, answer: dict[str, Any], content: str,
           tool_calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The scripted model: a short answer, any tool call the turn needs, and the note call when asked."""
    calls = list(tool_calls or [])
    if answer.get("note_ask_turns"):
        turns = answer["note_ask_turns"]
        calls.append({"id": f"call_note_{turns[0]}_{turns[1]}_{secrets.token_hex(3)}", "type": "function",
                      "function": {"name": "note", "arguments": json.dumps({"notes": _notes(conversation, turns)})}})
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
            "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 40}}


class LetheRun:
    """One memory on the stack, driven turn by turn."""

    def __init__(self, client: httpx.Client, conversation: Conversation, database_url: str) -> None:
        self.client, self.conversation, self.database_url = client, conversation, database_url
        self.notes_asked = 0
        self.asked_turns: list[tuple[int, int]] = []  # the turns of every note ask answered
        self.lane_timeouts = 0  # questions asked before the lane had caught up

    def _call(self, turn: Turn, messages: list[dict[str, Any]], at_offset: float = 0.0) -> dict[str, Any]:
        now = (turn.at.timestamp() + at_offset)
        headers = {"X-Lethe-Now": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))}
        response = self.client.post(f"/v1/memories/{MEMORY}/decorate", headers=headers,
                                    json={"model": MODEL, "messages": messages})
        response.raise_for_status()
        answer = response.json()
        self.notes_asked += bool(answer.get("note_ask_turns"))
        if answer.get("note_ask_turns"):
            self.asked_turns.append(tuple(answer["note_ask_turns"]))
        return answer

    def _report(self, turn: Turn, answer: dict[str, Any], response: dict[str, Any], at_offset: float) -> None:
        headers = {"X-Lethe-Now": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(turn.at.timestamp() + at_offset))}
        reported = self.client.post(f"/v1/memories/{MEMORY}/report", headers=headers,
                                    json={"decorate_id": answer["decorate_id"], "response": response})
        reported.raise_for_status()

    def turn(self, turn: Turn) -> dict[str, Any]:
        """Plays one turn; returns the request decorated for its user message."""
        first = self._call(turn, [{"role": "user", "content": turn.user}])
        if turn.tool is None:
            self._report(turn, first, _reply(self.conversation, first, turn.reply), 20)
            return first
        call_id = f"call_logs_{turn.number}"
        logs = {"id": call_id, "type": "function", "function": {"name": "read_logs", "arguments": "{}"}}
        self._report(turn, first, _reply(self.conversation, first, "Reading the logs.", [logs]), 10)
        second = self._call(turn, [{"role": "tool", "tool_call_id": call_id, "content": turn.tool}], 30)
        self._report(turn, second, _reply(self.conversation, second, turn.reply), 40)
        return first

    def wait_for_lane(self, timeout: float) -> float:
        """Until the lane has caught up (or `timeout`): every event the memory sent processed, so its jobs are
        done (the walk for the next message prepared, earlier blocks distilled), and every fact written so far
        in the graph. A question comes days after its facts left the view: by then the lane has long caught up.
        Returns the seconds waited."""
        started = time.monotonic()
        while True:
            facts = self.client.get(f"/v1/memories/{MEMORY}/facts").json()["facts"]
            if all(f.get("integrated_at") for f in facts) and asyncio.run(_unprocessed(self.database_url)) == 0:
                return time.monotonic() - started
            if time.monotonic() - started >= timeout:
                break
            time.sleep(0.25)
        self.lane_timeouts += 1
        return time.monotonic() - started

    def question_block(self, turn: int) -> dict[str, Any] | None:
        """The turn's recall block as stored (its provenance and fact ids), None when it had none."""
        state = self.client.get(f"/v1/memories/{MEMORY}").json()
        return next((b for b in state["recall_blocks"] if b["turn"] == turn), None)


async def _unprocessed(database_url: str) -> int:
    """The memory's outbox events the lane has not finished (read from the stack's own Postgres)."""
    connection = await asyncpg.connect(database_url)
    try:
        return int(await connection.fetchval(
            "SELECT count(*) FROM outbox o JOIN memories m ON m.id = o.memory_pk "
            "WHERE m.memory_id = $1 AND o.processed_at IS NULL", MEMORY))
    finally:
        await connection.close()


def _print_table(results: dict[str, Any]) -> None:
    print(f"\n{'approach':<12} {'kind':<12} {'n':>3} {'in front':>9} {'old alone':>10} {'block p50':>10} "
          f"{'block p90':>10} {'precision':>10}")
    for name, summary in results["approaches"].items():
        for kind in ("direct", "paraphrased", "two_hop", "all"):
            row = summary.get(kind)
            if not row:
                continue
            old = "-" if not row["changed_facts_asked"] else \
                f"{row['old_value_alone_count']}/{row['changed_facts_asked']}"
            cells = [_fmt(row["answer_in_front"]), old, _fmt(row["block_tokens_p50"]), _fmt(row["block_tokens_p90"]),
                     _fmt(row["block_precision"])]
            print(f"{name:<12} {kind:<12} {row['questions']:>3} {cells[0]:>9} {cells[1]:>10} {cells[2]:>10} "
                  f"{cells[3]:>10} {cells[4]:>10}")


def _fmt(value: Any) -> str:
    return "-" if value is None else (f"{value:.0%}" if isinstance(value, float) and value <= 1 else str(value))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short conversation (a few minutes on 2 cores)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--ceiling", type=int, default=6000)
    parser.add_argument("--turns", type=int, default=None)
    parser.add_argument("--no-mem0", action="store_true", help="leave the mem0 peer out")
    parser.add_argument("--pause", type=float, default=0.0,
                        help="seconds between a turn's report and the next user message (a person reading)")
    parser.add_argument("--lane-wait-budget", type=float, default=None,
                        help="most seconds, in all, spent waiting before questions for the lane to catch up "
                             "(at most 60 s a question; default 300 with --quick, else 600)")
    args = parser.parse_args()
    if args.lane_wait_budget is None:
        args.lane_wait_budget = 300.0 if args.quick else 600.0
    turns = args.turns or (140 if args.quick else 320)
    counter = TiktokenCounter()
    conversation = generate(seed=args.seed, turns=turns, ceiling_tokens=args.ceiling,
                            count_tokens=counter.count_text, questions_per_kind=5 if args.quick else 10)
    questions = {q.turn: q for q in conversation.questions}
    embedder = LocalEmbedder(threads=1)

    stack, data_dir, admin = start_clocked_stack("lethe-bench-recall-", args.ceiling)
    url = stack.url
    lethe = Tally("lethe", conversation)
    baselines: Baselines | None = None
    started = time.monotonic()
    waited = 0.0
    control: list[bool] = []
    provenance: dict[str, int] = {}  # how each question turn's block was made
    misses: list[str] = []
    try:
        with httpx.Client(base_url=url, timeout=120) as client:
            made = client.post("/v1/admin/tenants", json={"name": f"recall-bench-{secrets.token_hex(4)}"},
                               headers={"Authorization": f"Bearer {admin}"})
            made.raise_for_status()
            client.headers["Authorization"] = f"Bearer {made.json()['api_key']}"
            baselines = Baselines(conversation, counter, embedder, args.ceiling, MODEL,
                                  None if args.no_mem0 else data_dir / "state" / "postgres")
            database_url = stack.postgres_url()
            run = LetheRun(client, conversation, database_url)
            diagnosis = Diagnosis(database_url.replace("postgresql://", "postgresql+asyncpg://", 1),
                                  made.json()["tenant_id"], MEMORY, embedder)
            for turn in conversation.turns:
                question = questions.get(turn.number)
                if question is not None:
                    waited += run.wait_for_lane(max(0.0, min(60.0, args.lane_wait_budget - waited)))
                    baselines.question(question)
                logged = list(stack.log_tail)
                answer = run.turn(turn)
                messages = answer["request"].get("messages") or answer["request"].get("input") or []
                texts = request_texts(messages)
                block = current_recall_block(messages)
                if question is not None:
                    lethe.question(question, texts, counter.count_text(block) if block else None)
                    stored = run.question_block(turn.number)
                    # No block: the gateway logs it when recall's deadline passed with nothing found.
                    cut = [line for line in stack.log_tail if line not in logged and "recall past its deadline" in line]
                    kind = stored["provenance"] if stored else ("none, deadline" if cut else "none, nothing kept")
                    provenance[kind] = provenance.get(kind, 0) + 1
                    made_by = kind + (": " + cut[-1].split("deadline", 1)[1].strip() if cut and not stored else "")
                    said = sentences(texts)
                    missing = [conversation.facts[f] for f in question.answers
                               if not shows(said, conversation.facts[f])]
                    if missing:
                        facts = client.get(f"/v1/memories/{MEMORY}/facts").json()["facts"]
                        for line in diagnosis.miss(question, missing, facts, stored, made_by,
                                                   run.asked_turns):
                            print(line, flush=True)
                            misses.append(line.strip())
                    recent = _recent_fact(conversation, turn.number)
                    if recent is not None:  # a fact still in view: shows the check finds what is there
                        control.append(shows(sentences(texts), recent))
                if block:
                    wanted = [conversation.facts[f] for f in (*question.answers, *question.olds)] if question else []
                    lethe.block(question.kind if question else None, block, wanted, turn.user)
                baselines.add_turn(turn)
                if args.pause:
                    time.sleep(args.pause)
                if turn.number % 20 == 0:
                    print(f"turn {turn.number}/{len(conversation.turns)} "
                          f"({time.monotonic() - started:.0f} s)", flush=True)
            state = client.get(f"/v1/memories/{MEMORY}").json()
    finally:
        if baselines is not None:
            baselines.close()
        stop_stack(stack)
        shutil.rmtree(data_dir, ignore_errors=True)

    results: dict[str, Any] = {
        "seed": args.seed, "turns": turns, "ceiling_tokens": args.ceiling, "quick": args.quick,
        "pause_seconds": args.pause, "lane_wait_budget_seconds": args.lane_wait_budget,
        "cpu_affinity": sorted(os.sched_getaffinity(0)),
        "questions": {k: sum(q.kind == k for q in conversation.questions)
                      for k in ("direct", "paraphrased", "two_hop")},
        "planted_facts": sum(not f.everyday for f in conversation.facts.values()),
        "conversation_days": (conversation.turns[-1].at - conversation.turns[0].at).days,
        "seconds": round(time.monotonic() - started, 1), "lane_wait_seconds": round(waited, 1),
        "lane_wait_timeouts": run.lane_timeouts,
        "question_blocks_by_provenance": provenance,
        "lethe_misses": misses, "lethe_miss_causes": diagnosis.causes,
        "lethe_state": {"messages": state["messages"], "turns": state["turns"], "facts": state["facts"],
                        "graph": state["graph"], "episodes_by_state": _count_states(state["episodes"]),
                        "note_asks_answered": run.notes_asked},
        "lethe_recent_fact_in_front": round(sum(control) / len(control), 3) if control else None,
        "approaches": {"lethe": lethe.summary(), **baselines.summaries()},
        "mem0": baselines.mem0_info(),
        "machine": cpu_facts(),
    }
    if state["turns"] != turns:  # the note-taker answers by turn number: they must be the same as Lethe's
        print(f"WARNING: Lethe counted {state['turns']} turns, the conversation has {turns}", flush=True)
    _print_table(results)
    print(f"\n{turns} turns over {results['conversation_days']} days, ceiling {args.ceiling}; Lethe: "
          f"{results['lethe_state']}; {results['seconds']} s (lane waits {results['lane_wait_seconds']} s, "
          f"{run.lane_timeouts} questions asked before the lane had caught up)")
    print(f"question turns' recall blocks by provenance: {provenance}; causes of misses: {diagnosis.causes}")
    print(f"check of the check: a fact of the last 6 turns is in front of Lethe's model at "
          f"{_fmt(results['lethe_recent_fact_in_front'])} of question turns ({len(control)} with one)")
    if results["mem0"]:
        print(f"mem0: {results['mem0']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "recall.json").write_text(json.dumps(results, indent=2) + "\n")


def _recent_fact(conversation: Conversation, number: int) -> Fact | None:
    """The newest planted fact of the last six turns before `number`, if any."""
    recent = [f for f in conversation.facts.values() if not f.everyday and number - 6 <= f.turn < number]
    return max(recent, key=lambda f: f.turn) if recent else None


def _count_states(episodes: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for episode in episodes:
        out[episode["state"]] = out.get(episode["state"], 0) + 1
    return out


if __name__ == "__main__":
    main()
