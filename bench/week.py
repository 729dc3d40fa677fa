"""One memory over a simulated week: each episode's activation against time, fades and sleeps marked.

Drives one memory through the API with `X-Lethe-Now` (on in `lethe dev`), at a 32k ceiling so the context fills
several times in the week: two working sessions a day (09:00 and 15:00, a turn every three minutes), a day off
on Wednesday and on Saturday (more than 24 hours of silence: the next turn sleeps), a scripted model answering
every note ask. The week ends an hour before the real time. Then reads
`GET /v1/memories/{id}/activation` (the engine's own activation at 400 moments, and the fades, sleeps and ceiling
seals) and draws it: one line per episode.

    .venv/bin/python bench/week.py [--turns-per-session 12] [--ceiling 32000]

Writes bench/results/week.json and bench/results/week.png.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project before bench/ (bench/providers.py)

from cost import reply, user_message  # noqa: E402
from hot_path import Conversation  # noqa: E402
from stack import RESULTS, Stack, running_stack  # noqa: E402

DAYS_OFF = {2, 5}  # Wednesday and Saturday of a week starting on Monday


def run(stack: Stack, turns_per_session: int) -> dict[str, Any]:
    now = datetime.now(UTC)
    monday = (now - timedelta(days=7, hours=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    memory_id = "week"
    started = time.monotonic()
    slept = 0
    with stack.client() as client:
        conversation = Conversation(client, memory_id, reply=reply)
        for day in range(7):
            if day in DAYS_OFF:
                continue
            for hour in (9, 15):
                for i in range(turns_per_session):
                    at = monday + timedelta(days=day, hours=hour, minutes=3 * i)
                    if at > now - timedelta(minutes=30):
                        break
                    answer, _ = conversation.say(user_message(conversation.turn + 1), at)
                    slept += bool(answer.get("slept"))
            print(f"  week: day {day + 1} done, turn {conversation.turn} ({time.monotonic() - started:.0f} s)",
                  flush=True)
        activation = client.get(f"/v1/memories/{memory_id}/activation",
                                params={"points": 400, "limit": 1000}).raise_for_status().json()
    reasons: dict[str, int] = {}
    for mark in activation["markers"]:
        reasons[mark["reason"]] = reasons.get(mark["reason"], 0) + 1
    print(f"  week: {conversation.turn} turns, {activation['episodes_total']} episodes, markers {reasons}, "
          f"{slept} decorates slept; slowest call {conversation.slowest_ms:.0f} ms ({conversation.slowest_call})",
          flush=True)
    return {"turns": conversation.turn, "episodes": activation["episodes_total"], "markers": reasons,
            "slept_calls": slept, "slowest_call_ms": round(conversation.slowest_ms, 1),
            "slowest_call": conversation.slowest_call, "activation": activation}


def write(result: dict[str, Any]) -> None:
    from plots import plot_week

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "week.json").write_text(json.dumps(result) + "\n")
    plot_week(result["activation"], RESULTS / "week.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns-per-session", type=int, default=8)
    parser.add_argument("--ceiling", type=int, default=32000)
    args = parser.parse_args()
    with running_stack("lethe-bench-week-", LETHE_CEILING_TOKENS=str(args.ceiling)) as stack:
        result = run(stack, args.turns_per_session)
    result["ceiling"] = args.ceiling
    write(result)


if __name__ == "__main__":
    main()
