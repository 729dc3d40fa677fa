"""Claim kinds: do constraints stay in front of the model, and do corrections come back with their topic?

Plays a scripted 300-turn conversation (bench/claims_script.py: 10 constraints, 10 decisions, 10 corrections of
the assistant's own claims, 5 dead ends, 5 open questions of which 3 are settled later, 60 routine lookups, and
chatter between) through decorate/report on `lethe dev` at a 6k ceiling, with the conversation's clock
(`X-Lethe-Now`). The bench is the agent and a perfect note-taker that labels each note entry with its kind. It
looks at every decorated request: is each constraint in front of the model (facts block, history in view or
recall block)? When a correction's topic comes back, is the corrected value there, and is the old value there
without it? At the end, are the open questions still marked open (and the settled ones settled)?

The same conversation runs three times, each on a fresh stack: claim kinds weighed (the default), kinds off
(`LETHE_CLAIM_KINDS=false`), and salience off (`LETHE_SALIENCE=false`, when this build has that setting).

    .venv/bin/python bench/claims.py [--turns 300] [--ceiling 6000] [--seed 11] [--only on]

Prints the figures side by side and writes bench/results/claims.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import secrets
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from claims_script import Script, Turn, generate  # noqa: E402
from stack import RESULTS, start_clocked_stack, stop_stack, wait_for_lane, write_result  # noqa: E402

from engine.blocks.recall_block import OPEN  # noqa: E402
from engine.config import MechanismConfig  # noqa: E402

MODEL = "gpt-4o-mini"
MEMORY = "claims-bench"
SYSTEM = "You help an engineering team run its services. Be brief."


def _stamp(turn: Turn, offset: float) -> dict[str, str]:
    return {"X-Lethe-Now": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(turn.at.timestamp() + offset))}


class Run:
    """One memory driven turn by turn; the agent keeps its whole transcript and resends it."""

    def __init__(self, client: httpx.Client, script: Script) -> None:
        self.client, self.script = client, script
        self.transcript: list[dict[str, Any]] = []
        self.notes = 0

    def _decorate(self, turn: Turn, offset: float) -> dict[str, Any]:
        body = {"model": MODEL, "messages": [{"role": "system", "content": SYSTEM}, *self.transcript],
                "tools": [{"type": "function", "function": {"name": "lookup_ticket", "parameters": {
                    "type": "object", "properties": {"ticket": {"type": "string"}}}}}]}
        response = self.client.post(f"/v1/memories/{MEMORY}/decorate", headers=_stamp(turn, offset), json=body)
        response.raise_for_status()
        return dict(response.json())

    def _reply(self, turn: Turn, answer: dict[str, Any], content: str, offset: float,
               call: dict[str, Any] | None = None) -> None:
        """The scripted model: its answer, a tool call when the turn needs one, the note call when asked."""
        calls = [call] if call else []
        if answer.get("note_ask_turns"):
            first, last = answer["note_ask_turns"]
            self.notes += 1
            calls.append({"id": f"call_note_{turn.number}_{secrets.token_hex(3)}", "type": "function",
                          "function": {"name": "note",
                                       "arguments": json.dumps({"notes": self.script.notes_for(first, last)})}})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        response = {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if call else "stop"}],
                    "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 40}}
        reported = self.client.post(f"/v1/memories/{MEMORY}/report", headers=_stamp(turn, offset),
                                    json={"decorate_id": answer["decorate_id"], "response": response})
        reported.raise_for_status()
        kept = reported.json()["response"]["choices"][0]["message"]
        self.transcript.append(kept)

    def turn(self, turn: Turn) -> dict[str, Any]:
        """Plays one turn; returns the request decorated for its user message."""
        self.transcript.append({"role": "user", "content": turn.user})
        first = self._decorate(turn, 0)
        if turn.tool is None:
            self._reply(turn, first, turn.reply, 20)
            return first
        call = {"id": f"call_lookup_{turn.number}", "type": "function",
                "function": {"name": "lookup_ticket", "arguments": "{}"}}
        self._reply(turn, first, "Looking it up.", 10, call)
        self.transcript.append({"role": "tool", "tool_call_id": call["id"], "content": turn.tool})
        second = self._decorate(turn, 30)
        self._reply(turn, second, turn.reply, 40)
        return first


def _text(request: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content") or "") for m in request.get("messages") or [])


def _where(request: dict[str, Any], words: str) -> str:
    """Which part of the request shows `words` first: the facts block, a recall block, or the history."""
    for message in request.get("messages") or []:
        content = str(message.get("content") or "")
        if words in content:
            if content.startswith("Facts kept from"):
                return "facts block"
            return "recall block" if content.startswith(OPEN) else "history"
    return "nowhere"


class Tally:
    """The figures of one run, from every decorated request."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.constraint_checks = self.constraint_in_front = 0
        self.constraint_misses: dict[str, int] = {}
        self.returns = self.recalled = self.old_alone_at_return = 0
        self.old_alone_any_turn = 0
        self.old_alone_in: dict[str, int] = {}
        self.return_detail: list[dict[str, Any]] = []
        self.old_alone_detail: list[dict[str, Any]] = []
        self.constraint_seen_in: dict[str, int] = {}

    def turn(self, turn: Turn, request: dict[str, Any]) -> None:
        text = _text(request)
        for item in self.script.items.values():
            if item.kind == "constraint" and item.turn < turn.number:
                self.constraint_checks += 1
                if item.shows in text:
                    self.constraint_in_front += 1
                    where = _where(request, item.shows)
                    self.constraint_seen_in[where] = self.constraint_seen_in.get(where, 0) + 1
                else:
                    self.constraint_misses[item.id] = self.constraint_misses.get(item.id, 0) + 1
            if item.kind == "correction" and item.old and item.turn < turn.number:
                alone = item.old in text and item.shows not in text
                self.old_alone_any_turn += alone
                if alone:
                    where = _where(request, item.old)
                    self.old_alone_in[where] = self.old_alone_in.get(where, 0) + 1
                    said = next(str(m.get("content")) for m in request["messages"] if item.old in str(m.get("content")))
                    at = said.index(item.old)
                    self.old_alone_detail.append({"turn": turn.number, "corrected_in": item.turn, "where": where,
                                                  "old": item.old, "text": said[max(0, at - 250):at + 150]})
                if item.back == turn.number:
                    self.returns += 1
                    self.recalled += item.shows in text
                    self.old_alone_at_return += alone
                    recalled = [str(m.get("content")) for m in request.get("messages") or []
                                if str(m.get("content") or "").startswith(OPEN)]
                    self.return_detail.append({"turn": turn.number, "value": item.shows,
                                               "shown_in": _where(request, item.shows),
                                               "old_shown_in": _where(request, item.old),
                                               "recall_block": recalled[-1] if recalled else None})

    def summary(self, facts: list[dict[str, Any]], last: dict[str, Any]) -> dict[str, Any]:
        by_note = {f["note"]: f for f in facts}
        questions = [i for i in self.script.items.values() if i.kind == "open_question"]
        answered = {i.note["settles"] for i in self.script.items.values() if i.note.get("settles")}
        still_open = [q for q in questions if q.shows not in answered]
        settled = [q for q in questions if q.shows in answered]

        def marked_open(note: str) -> bool:
            fact = by_note.get(note)
            return bool(fact and fact.get("kind") == "open_question" and not fact.get("settled_by"))

        text = _text(last)
        return {
            "constraints_in_front": _share(self.constraint_in_front, self.constraint_checks),
            "constraint_checks": self.constraint_checks,
            "constraint_misses_by_item": self.constraint_misses,
            "corrections_recalled_at_return": _share(self.recalled, self.returns),
            "correction_returns": self.returns,
            "returns": self.return_detail,
            "old_value_alone_at_return": self.old_alone_at_return,
            "old_value_alone_any_later_turn": self.old_alone_any_turn,
            "old_value_alone_shown_in": self.old_alone_in,
            "old_value_alone": self.old_alone_detail[:40],
            "constraints_shown_in": self.constraint_seen_in,
            "open_questions_still_marked_open": f"{sum(marked_open(q.shows) for q in still_open)}/{len(still_open)}",
            "settled_questions_marked_settled": f"{sum(not marked_open(q.shows) for q in settled)}/{len(settled)}",
            "open_questions_in_front_at_end": f"{sum(q.shows in text for q in still_open)}/{len(still_open)}",
            "facts_by_kind": _count(f.get("kind", "fact") for f in facts),
            "retired_as": _count(f["retired_as"] for f in facts if f.get("retired_as")),
        }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        out[value] = out.get(value, 0) + 1
    return out


def play(script: Script, ceiling: int, env: dict[str, str], lane_wait: float) -> dict[str, Any]:
    """One run on a fresh stack with these settings."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    stack, data_dir, admin = start_clocked_stack("lethe-bench-claims-", ceiling)
    started, waited = time.monotonic(), 0.0
    tally = Tally(script)
    try:
        with httpx.Client(base_url=stack.url, timeout=120) as client:
            made = client.post("/v1/admin/tenants", json={"name": f"claims-bench-{secrets.token_hex(4)}"},
                               headers={"Authorization": f"Bearer {admin}"})
            made.raise_for_status()
            client.headers["Authorization"] = f"Bearer {made.json()['api_key']}"
            run = Run(client, script)
            returns = {i.back for i in script.items.values() if i.back}
            last: dict[str, Any] = {}
            for turn in script.turns:
                if turn.number in returns:  # the topic comes back days later: by then the lane has caught up
                    waited += wait_for_lane(stack, lane_wait)
                last = run.turn(turn)["request"]
                tally.turn(turn, last)
                if turn.number % 50 == 0:
                    print(f"  turn {turn.number}/{len(script.turns)} ({time.monotonic() - started:.0f} s)", flush=True)
            waited += wait_for_lane(stack, lane_wait)
            facts = client.get(f"/v1/memories/{MEMORY}/facts").json()["facts"]
            state = client.get(f"/v1/memories/{MEMORY}").json()
    finally:
        stop_stack(stack)
        shutil.rmtree(data_dir, ignore_errors=True)
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    summary = tally.summary(facts, last)
    summary.update(seconds=round(time.monotonic() - started, 1), lane_wait_seconds=round(waited, 1),
                   note_asks_answered=run.notes, facts=state["facts"],
                   episodes_by_state=_count(e["state"] for e in state["episodes"]))
    return summary


ROWS = [("constraints_in_front", "constraints in front, every later turn (target 100%)"),
        ("corrections_recalled_at_return", "corrections recalled when their topic returns (>= 90%)"),
        ("old_value_alone_at_return", "old values shown without their correction, at return (0)"),
        ("old_value_alone_any_later_turn", "... at any later turn"),
        ("open_questions_still_marked_open", "open questions still marked open"),
        ("settled_questions_marked_settled", "settled questions marked settled"),
        ("open_questions_in_front_at_end", "open questions in front at the last turn"),
        ("seconds", "seconds")]


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.1%}" if isinstance(value, float) and value <= 1 else str(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--ceiling", type=int, default=6000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--lane-wait", type=float, default=45.0, help="most seconds to wait for the lane")
    parser.add_argument("--only", choices=["on", "kinds_off", "salience_off"], action="append")
    parser.add_argument("--out", default=str(RESULTS / "claims.json"))
    args = parser.parse_args()
    script = generate(turns=args.turns, seed=args.seed)
    runs = {"on": {}, "kinds_off": {"LETHE_CLAIM_KINDS": "false"}}
    # Salience is another setting of the mechanism; compared only where this build has it.
    if "salience" in {f.name for f in dataclasses.fields(MechanismConfig)}:
        runs["salience_off"] = {"LETHE_SALIENCE": "false"}
    results: dict[str, Any] = {"turns": args.turns, "ceiling_tokens": args.ceiling, "seed": args.seed,
                               "planted": _count(i.kind for i in script.items.values()), "runs": {}}
    for name, env in runs.items():
        if args.only and name not in args.only:
            continue
        print(f"run {name} {env or ''}", flush=True)
        results["runs"][name] = play(script, args.ceiling, env, args.lane_wait)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), "unknown")
    results["machine"] = {"cpu": cpu, "cpus": os.cpu_count()}
    names = list(results["runs"])
    print(f"\n{'figure':<60}" + "".join(f"{n:>14}" for n in names))
    for key, label in ROWS:
        print(f"{label:<60}" + "".join(f"{_fmt(results['runs'][n].get(key)):>14}" for n in names))
    print(f"\n{args.turns} turns at a {args.ceiling}-token ceiling; CPU {cpu} ({os.cpu_count()} cpus)")
    for name in names:
        run = results["runs"][name]
        print(f"{name}: facts by kind {run['facts_by_kind']}, retired as {run['retired_as']}, episodes "
              f"{run['episodes_by_state']}, note asks {run['note_asks_answered']}; constraints shown in "
              f"{run['constraints_shown_in']}; old values alone in {run['old_value_alone_shown_in']}")
    write_result(args.out, results)


if __name__ == "__main__":
    main()
