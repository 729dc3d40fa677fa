"""LoCoMo: on real long chats, is the turn that answers a question in front of the model when it is asked?

Each chat (bench/locomo_data.py: the first speaker the user, the second the assistant) is played through
decorate/report on `lethe dev` at a small ceiling, at its sessions' own dates (`X-Lethe-Now`). The note-taker is
faithful: asked to note, it notes every turn not yet noted up to the last one asked, each message verbatim and
dated, its speaker as subject and the message's longest word as object; with `--note-model` an OpenAI-compatible
model answers them instead (the `openai` client's OPENAI_BASE_URL and OPENAI_API_KEY). Then every question of
categories 1-4 is sent alone after the whole chat (a decorate each, none reported: each replaces the one
before), and each of its evidence turns is looked for anywhere in the decorated request. Beside Lethe, on the
same chat and counter:

- window: the agent's own newest messages, `--window` tokens of them, and the question;
- window+mem0: the same window and mem0's top 10 for the question (infer off, the project's embedder, pgvector
  in the stack's own Postgres), as one system message.

    .venv/bin/python bench/locomo.py --data ~/locomo [--chats 26,30] [--held-out] [--no-mem0]

The data is not shipped and never downloaded by the project (docs/bench.md says where to get it). Develop on
the default chats (26, 30, 41, 42, 43, 44); `--held-out` runs 47-50, the published figure, once. Prints per
category the share of questions with any and with all of their evidence in front, tokens per request, and the
share of Lethe's facts retired; writes bench/results/locomo.json and bench/results/locomo.png.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from locomo_data import CATEGORIES, DEVELOPMENT, HELD_OUT, Chat, load_chats  # noqa: E402
from locomo_players import LethePlayer, ModelNoteTaker, WindowPlayer  # noqa: E402
from stack import RESULTS, cpu_facts, start_clocked_stack, stop_stack  # noqa: E402

from providers.tokens import TiktokenCounter  # noqa: E402

MODEL = "gpt-4o-mini"


class Tally:
    """Per approach and category: questions, any evidence in front, all of it, request tokens."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list[Any]]] = {}

    def add(self, approach: str, category: str, found: list[bool], tokens: int) -> None:
        for key in (category, "all"):
            row = self.rows.setdefault(approach, {}).setdefault(key, [])
            row.append((any(found), all(found), tokens))

    def summary(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for approach, categories in self.rows.items():
            out[approach] = {}
            for category, rows in categories.items():
                out[approach][category] = {
                    "questions": len(rows),
                    "any_evidence_in_front": round(sum(r[0] for r in rows) / len(rows), 3),
                    "all_evidence_in_front": round(sum(r[1] for r in rows) / len(rows), 3),
                    "request_tokens_p50": int(statistics.median(r[2] for r in rows)),
                }
        return out


def run_chat(chat: Chat, client: httpx.Client, database_url: str, args: argparse.Namespace, counter: Any,
             tally: Tally, peer: Any) -> dict[str, Any]:
    started = time.monotonic()
    lethe = LethePlayer(client, chat, database_url, MODEL, counter,
                        ModelNoteTaker(args.note_model) if args.note_model else None)
    window = WindowPlayer(chat, counter, MODEL, args.window, peer)
    for turn in chat.turns:
        lethe.play(turn)
        window.add(turn)
        if turn.number % 50 == 0:
            print(f"  chat {chat.number}: turn {turn.number}/{len(chat.turns)} "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
    waited = lethe.wait_for_lane(args.lane_wait)
    played = time.monotonic() - started
    for question in chat.questions:
        if args.as_conversation:
            # A person reads the reply before asking again: the lane has caught up (earlier blocks distilled).
            waited += lethe.wait_for_lane(30)
        found, tokens = lethe.ask(question, reply=args.as_conversation)
        tally.add("lethe", question.category, found, tokens)
        for name, (found, tokens) in window.ask(question).items():
            tally.add(name, question.category, found, tokens)
    if args.dump:
        lethe.dump(args.dump)
    state = lethe.state()
    graph = state["graph"]
    written = graph["current_facts"] + graph["retired_facts"]
    result = {"chat": chat.number, "turns": len(chat.turns), "questions": len(chat.questions),
              "lethe_turns": state["turns"], "facts": written, "retired_facts": graph["retired_facts"],
              "retired_share": round(graph["retired_facts"] / written, 3) if written else 0.0,
              "passages": graph["passages"], "messages": state["messages"],
              "note_asks": lethe.note_asks, "lane_wait_seconds": round(waited, 1),
              "play_seconds": round(played, 1), "ask_seconds": round(time.monotonic() - started - played, 1),
              "earlier_recall_share_last_request": lethe.earlier_recall_share(),
              "blocks_placed": lethe.blocks_placed, "retired_examples": lethe.retired_examples()}
    print(f"  chat {chat.number}: {json.dumps(result)}", flush=True)
    return result


def _print(summary: dict[str, Any], chats: list[dict[str, Any]]) -> None:
    print(f"\n{'approach':<12} {'category':<12} {'n':>5} {'any':>6} {'all':>6} {'tokens p50':>11}")
    for approach, categories in summary.items():
        for category in (*CATEGORIES.values(), "all"):
            row = categories.get(category)
            if row:
                print(f"{approach:<12} {category:<12} {row['questions']:>5} {row['any_evidence_in_front']:>6.0%} "
                      f"{row['all_evidence_in_front']:>6.0%} {row['request_tokens_p50']:>11}")
    written = sum(c["facts"] for c in chats)
    retired = sum(c["retired_facts"] for c in chats)
    print(f"\nLethe's facts retired: {retired} of {written} ({retired / max(1, written):.1%})")


def _plot(summary: dict[str, Any], out: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (make install-bench): no plot", flush=True)
        return
    categories = [*CATEGORIES.values(), "all"]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(summary)
    for i, (approach, rows) in enumerate(summary.items()):
        values = [rows.get(c, {}).get("any_evidence_in_front", 0) for c in categories]
        ax.bar([x + i * width for x in range(len(categories))], values, width, label=approach)
    ax.set_xticks([x + width * (len(summary) - 1) / 2 for x in range(len(categories))], categories)
    ax.set_ylabel("any evidence turn in front")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("LoCoMo: the turn that answers the question, in front of the model")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the unzipped data/locomo10.zip of LoCoMo")
    parser.add_argument("--chats", default=None, help="comma-separated chat numbers (default: the development six)")
    parser.add_argument("--held-out", action="store_true", help="run the held-out chats 47-50 (the published figure)")
    parser.add_argument("--ceiling", type=int, default=6000)
    parser.add_argument("--window", type=int, default=5000, help="the window baselines' tokens of newest messages")
    parser.add_argument("--no-mem0", action="store_true")
    parser.add_argument("--as-conversation", action="store_true",
                        help="report a short reply to every question, so the questions join the history (the lane "
                             "catching up between questions, as while a person reads the reply)")
    parser.add_argument("--lane-wait", type=float, default=600.0, help="most seconds to wait for the lane per chat")
    parser.add_argument("--note-model", default=None,
                        help="answer note asks with this model (OpenAI-compatible; the openai client's "
                             "OPENAI_BASE_URL and OPENAI_API_KEY) instead of the verbatim note-taker")
    parser.add_argument("--dump", type=Path, default=None,
                        help="write each chat's last Lethe request and its facts here, to read the misses")
    parser.add_argument("--out", type=Path, default=RESULTS / "locomo.json")
    args = parser.parse_args()
    numbers = HELD_OUT if args.held_out else \
        tuple(int(n) for n in args.chats.split(",")) if args.chats else DEVELOPMENT
    chats = load_chats(args.data.expanduser(), numbers)
    counter = TiktokenCounter()
    stack, data_dir, admin = start_clocked_stack("lethe-bench-locomo-", args.ceiling)
    tally, results, peer = Tally(), [], None
    started = time.monotonic()
    try:
        with httpx.Client(base_url=stack.url, timeout=300) as client:
            made = client.post("/v1/admin/tenants", json={"name": f"locomo-{secrets.token_hex(4)}"},
                               headers={"Authorization": f"Bearer {admin}"}).raise_for_status()
            client.headers["Authorization"] = f"Bearer {made.json()['api_key']}"
            if not args.no_mem0:
                from recall_baselines import _mem0_peer

                from providers.embedder import LocalEmbedder

                peer = _mem0_peer(data_dir / "state" / "postgres", LocalEmbedder(threads=1))
            for chat in chats:
                results.append(run_chat(chat, client, stack.postgres_url(), args, counter, tally, peer))
    finally:
        if peer is not None:
            peer.close()
        stop_stack(stack)
        shutil.rmtree(data_dir, ignore_errors=True)
    summary = tally.summary()
    _print(summary, results)
    written = sum(c["facts"] for c in results)
    out = {"chats": [c.number for c in chats], "held_out": args.held_out,
           "note_taker": args.note_model or "verbatim", "ceiling_tokens": args.ceiling,
           "window_tokens": args.window, "as_conversation": args.as_conversation,
           "seconds": round(time.monotonic() - started, 1), "approaches": summary, "per_chat": results,
           "retired_share": round(sum(c["retired_facts"] for c in results) / max(1, written), 3),
           "machine": cpu_facts()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    _plot(summary, args.out.with_suffix(".png"))
    print(f"wrote {args.out} ({out['seconds']} s; {out['machine']['cpu_model']})")


if __name__ == "__main__":
    main()
