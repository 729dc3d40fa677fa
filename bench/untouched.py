"""Messages that touch nothing: how many recall blocks a memory of 1,000 facts places for 100 messages about
something else entirely (small talk, general questions). Target: at most 5.

The memory's facts are a logistics firm's records (orders, hosts, people, rotas); the messages ask about
cooking, geography, jokes and the weather. Each message is a turn (decorate, a reply, report) a little apart, so
the lane prepares walks between them as it does in a conversation: both the prepared path and the inline walk
are exercised. `--no-floor` runs the same with the score floor off (every unrated hit may enter), to show what
it keeps out.

    .venv/bin/python bench/untouched.py [--facts 1000] [--messages 100] [--pause 0.5] [--no-floor]

Prints the blocks placed with their provenance and writes bench/results/untouched.json.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stack import RESULTS, cpu_facts, running_stack, wait_for_lane, write_result  # noqa: E402

MEMORY = "untouched-bench"
MODEL = "gpt-4o-mini"
TARGET = 5

_PEOPLE = ["Priya", "Tomas", "Ines", "Kwame", "Yuki", "Oskar", "Leila", "Marek", "Sade", "Bruno", "Anouk", "Ravi"]
_CITIES = ["Rotterdam", "Gdansk", "Valencia", "Antwerp", "Genoa", "Hamburg", "Piraeus", "Le Havre"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
_SERVICES = ["billing", "tracking", "customs", "manifest", "routing", "invoicing", "labels", "berths"]
_CHORES = ["forklift rota", "cold store audit", "crane inspection", "night shift handover", "pallet count",
           "dock safety walk", "seal log review", "tariff code check"]


def facts(count: int, rng: random.Random) -> list[dict[str, str]]:
    """`count` distinct records of the firm: orders, hosts and who does which chore where."""
    made: list[dict[str, str]] = []
    for n in itertools.count(1):
        kind = n % 3
        if kind == 0:
            order, city = f"ORD-{40000 + n}", rng.choice(_CITIES)
            made.append({"note": f"Order {order} ships to {city} on {rng.choice(_DAYS)}.", "subject": order,
                         "object": city})
        elif kind == 1:
            service, host = rng.choice(_SERVICES), f"db-{rng.choice(_SERVICES)}-{n}"
            made.append({"note": f"The {service} service {n} runs on host {host}.", "subject": f"{service} {n}",
                         "object": host})
        else:
            person, chore, city = rng.choice(_PEOPLE), rng.choice(_CHORES), rng.choice(_CITIES)
            made.append({"note": f"{person} does the {chore} at depot {n} in {city}.",
                         "subject": person, "object": f"depot {n}"})
        if len(made) == count:
            return made
    raise AssertionError("unreachable")


_ASKS = [
    "What is the capital of {country}?", "How do I make a good {dish} at home?", "Tell me a joke about {animal}.",
    "Can you recommend a {genre} novel for the weekend?", "How do you say '{phrase}' in {language}?",
    "What's a fun fact about {animal}?", "Any tips for growing {plant} on a balcony?",
    "Who wrote the most famous {genre} book of all time?", "What should I pack for a trip to {country}?",
    "Is it true that {animal} can sleep standing up?",
]
_FILL = {
    "country": ["Peru", "Japan", "Kenya", "Iceland", "Chile", "Vietnam", "Morocco", "Nepal", "Canada", "Ghana"],
    "dish": ["risotto", "pad thai", "sourdough", "ramen", "falafel", "paella", "dumplings", "lasagne"],
    "animal": ["cats", "penguins", "otters", "giraffes", "owls", "dolphins", "horses", "koalas"],
    "genre": ["science fiction", "mystery", "fantasy", "historical", "romance", "horror"],
    "phrase": ["good night", "see you soon", "happy birthday", "thank you very much"],
    "language": ["French", "Italian", "Swahili", "Korean", "Portuguese"],
    "plant": ["tomatoes", "basil", "strawberries", "lavender", "chillies"],
}
_SMALL_TALK = ["Thanks, that helps!", "Good morning!", "Haha, nice one.", "Ok, sounds good.", "Lovely weather today.",
               "I'm off for a coffee.", "That's all for now, bye!", "Have a great weekend!", "Cool, thank you.",
               "I had pancakes for breakfast."]


def messages(count: int, rng: random.Random) -> list[str]:
    made: list[str] = []
    while len(made) < count:
        if rng.random() < 0.25:
            text = rng.choice(_SMALL_TALK)
        else:
            ask = rng.choice(_ASKS)
            text = ask.format(**{k: rng.choice(v) for k, v in _FILL.items()})
        if text not in made[-5:]:
            made.append(text)
    return made


def _turn(client: Any, history: list[dict[str, Any]], text: str, turn: int) -> None:
    """One message decorated, answered and reported; the history grows as the agent's would."""
    history.append({"role": "user", "content": text})
    answer = client.post(f"/v1/memories/{MEMORY}/decorate",
                         json={"model": MODEL, "messages": history}).raise_for_status().json()
    reply = {"role": "assistant", "content": f"Happy to help with that ({turn})."}
    client.post(f"/v1/memories/{MEMORY}/report", json={
        "decorate_id": answer["decorate_id"],
        "response": {"choices": [{"message": reply, "finish_reason": "stop"}]}}).raise_for_status()
    history.append(reply)


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    env = {"LETHE_RECALL_SCORE_FLOOR": "0", "LETHE_RECALL_TOUCH_SIMILARITY": "-1"} if args.no_floor else {}
    with running_stack("lethe-bench-untouched-", **env) as stack, stack.client() as client:
        started = time.monotonic()
        history: list[dict[str, Any]] = [{"role": "system", "content": "You are a friendly assistant."}]
        _turn(client, history, "Hello!", 0)  # the memory is made by its first call
        for fact in facts(args.facts, rng):
            client.post(f"/v1/memories/{MEMORY}/facts", json=fact).raise_for_status()
        wait_for_lane(stack, timeout=1800)
        print(f"  {args.facts} facts written and integrated in {time.monotonic() - started:.0f} s", flush=True)
        placed: Counter[str] = Counter()
        shown: list[dict[str, Any]] = []
        for turn, text in enumerate(messages(args.messages, rng), start=1):
            _turn(client, history, text, turn)
            time.sleep(args.pause)
        state = client.get(f"/v1/memories/{MEMORY}").raise_for_status().json()
        for block in state["recall_blocks"]:
            placed[block["provenance"]] += 1
            shown.append({"turn": block["turn"], "provenance": block["provenance"], "facts": len(block["fact_ids"]),
                          "passages": len(block["passage_ids"])})
    return {"facts": args.facts, "messages": args.messages, "pause_seconds": args.pause, "floor": not args.no_floor,
            "blocks_placed": sum(placed.values()), "by_provenance": dict(placed), "blocks": shown,
            "target_at_most": TARGET, "machine": cpu_facts()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--pause", type=float, default=0.5, help="seconds between a report and the next message")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--no-floor", action="store_true", help="the score floor off, for comparison")
    parser.add_argument("--out", default=str(RESULTS / "untouched.json"))
    args = parser.parse_args()
    results = run(args)
    m = results["machine"]
    print(f"\n{results['messages']} messages that touch nothing, memory of {results['facts']} facts, "
          f"score floor {'on' if results['floor'] else 'off'}, {results['pause_seconds']} s between turns:")
    print(f"  recall blocks placed: {results['blocks_placed']} (target at most {TARGET}) "
          f"{results['by_provenance'] or ''}")
    print(f"  on {m['cpus']} cores, {m['cpu_model']}, flags {' '.join(m['cpu_flags']) or 'none'}")
    write_result(args.out, results)


if __name__ == "__main__":
    main()
