"""What Lethe saves: total input tokens sent over a long conversation (1M tokens by default) at the default
ceiling and at 32k, against sending the full history every turn and against truncating it to the ceiling.

Drives one memory per ceiling through the API, turn by turn, with a scripted note-taking model (every note ask
answered, as bench/hot_path.py does): each turn a user message of ~400 tokens and a reply of ~1,600 (an agent's
turn with a tool's output in it). Lethe's figure per turn is decorate's `estimated_tokens` (the request as sent:
instructions, facts block, history in view, note ask); the full history is every message so far, counted with the
same tokenizer; truncation keeps the most recent messages that fit the ceiling.

    .venv/bin/python bench/cost.py [--tokens 1000000] [--ceilings 0 32000]

Prints totals, writes bench/results/cost.json and bench/results/cost.png (tokens per turn over the conversation).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project before bench/ (bench/providers.py)

from hot_path import DEFAULT_CEILING, Conversation, note_call  # noqa: E402
from stack import RESULTS, Stack, running_stack  # noqa: E402

from providers.tokens import TiktokenCounter  # noqa: E402

TOPICS = ["the checkout migration", "the pricing page", "the refund line", "the tax tables", "the partner API",
          "the signup flow", "the billing export", "the search index"]
LOG = ("step {i}: fetched {topic} record {n}, status ok, owner Dana, review day {d}, {n} rows compared, "
       "diff empty except the currency column. ")


def user_message(turn: int) -> dict[str, Any]:
    topic = TOPICS[turn % len(TOPICS)]
    ask = (f"Turn {turn}: check {topic} again; last time ticket LTH-{turn} held {turn * 17} units. Here is what "
           f"the team pasted: ")
    return {"role": "user", "content": ask + "".join(LOG.format(i=i, topic=topic, n=turn * 7 + i, d=turn % 28)
                                                    for i in range(12))}


def reply(turn: int, answer: dict[str, Any]) -> dict[str, Any]:
    topic = TOPICS[turn % len(TOPICS)]
    content = (f"I ran the checks on {topic} for LTH-{turn}; the tool output follows. "
               + "".join(LOG.format(i=i, topic=topic, n=turn * 11 + i, d=(turn + i) % 28) for i in range(50)))
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if answer["note_ask_turns"]:
        message["tool_calls"] = [note_call(answer["note_ask_turns"])]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 400}}


def run(stack: Stack, ceiling: int, tokens: int, counter: TiktokenCounter | None = None) -> dict[str, Any]:
    counter = counter or TiktokenCounter()
    seen: list[int] = []
    lethe: list[int] = []
    full: list[int] = []
    truncated: list[int] = []
    history = 0
    started = time.monotonic()
    with stack.client() as client:
        conversation = Conversation(client, f"cost-{ceiling}", reply=reply)
        while history < tokens:
            message = user_message(conversation.turn + 1)
            history += counter.count_request({"model": "gpt-4o-mini", "messages": [message]})
            answer, scripted = conversation.say(message)
            lethe.append(answer["estimated_tokens"])
            full.append(history)
            truncated.append(min(history, ceiling))
            content = {"role": "assistant", "content": scripted["choices"][0]["message"]["content"]}
            history += counter.count_request({"model": "gpt-4o-mini", "messages": [content]})
            seen.append(history)
            if conversation.turn % 50 == 0:
                print(f"  ceiling {ceiling}: turn {conversation.turn}, {history:,} tokens of conversation, "
                      f"Lethe sent {lethe[-1]:,} this turn ({time.monotonic() - started:.0f} s)", flush=True)
    row = {
        "ceiling": ceiling, "turns": conversation.turn, "conversation_tokens_total": history,
        "lethe_total": sum(lethe), "full_history_total": sum(full), "truncation_total": sum(truncated),
        "lethe_max_per_turn": max(lethe), "slowest_call_ms": round(conversation.slowest_ms, 1),
        "slowest_call": conversation.slowest_call,
        "seconds": round(time.monotonic() - started, 1),
        "conversation_tokens": seen, "lethe_per_turn": lethe, "full_history_per_turn": full,
        "truncation_per_turn": truncated,
    }
    row["lethe_share_of_full"] = round(row["lethe_total"] / row["full_history_total"], 4)
    row["lethe_share_of_truncation"] = round(row["lethe_total"] / row["truncation_total"], 4)
    print(f"  ceiling {ceiling}: {row['turns']} turns, {history:,} tokens; input tokens sent: Lethe "
          f"{row['lethe_total']:,} = {row['lethe_share_of_full']:.2%} of full history ({row['full_history_total']:,}), "
          f"{row['lethe_share_of_truncation']:.0%} of truncation ({row['truncation_total']:,})", flush=True)
    return row


def write(runs: list[dict[str, Any]], tokens: int) -> dict[str, Any]:
    from plots import plot_cost

    RESULTS.mkdir(parents=True, exist_ok=True)
    result = {"conversation_tokens": tokens, "runs": runs}
    (RESULTS / "cost.json").write_text(json.dumps(result) + "\n")
    plot_cost(runs, RESULTS / "cost.png")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000, help="length of the conversation")
    parser.add_argument("--ceilings", type=int, nargs="+", default=[0, 32000], help="0: the default ceiling")
    args = parser.parse_args()
    runs = []
    for ceiling in args.ceilings:
        env = {"LETHE_CEILING_TOKENS": str(ceiling)} if ceiling else {}
        with running_stack("lethe-bench-cost-", **env) as stack:
            runs.append(run(stack, ceiling or DEFAULT_CEILING, args.tokens))
    write(runs, args.tokens)


if __name__ == "__main__":
    main()
