"""How long the memory inspector takes to show a large memory, in Debian's headless Chromium.

Starts `lethe dev` on free ports with a throwaway data directory and a small ceiling, grows one memory through
the API until it holds the episodes asked for (a few turns per decorate, two minutes apart by `X-Lethe-Now`,
with a day of silence now and then so sleeps happen too; the scripted model answers every note ask), then opens
`/inspect` on that memory again and again in fresh browser tabs and times:

- ready: from navigation until the summary, the timeline window, the activation plot and the facts block are
  drawn (the page sets `body[data-ready=yes]`);
- complete: until the export (recall blocks, entities, turn texts) is loaded too;
- the longest main-thread task while loading (Long Tasks API): how long the page was frozen at worst.

    .venv/bin/python bench/inspector.py [--episodes 1000] [--loads 7] [--ceiling 8000]

Prints the figures and writes them into bench/results/inspector.json under the episode count; the target is
ready in under 2 s at 1k episodes. `--episodes 10000 --batch 12 --no-notes` checks that 10k stay responsive.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from stack import running_stack  # noqa: E402 - bench scripts share the stack launcher

from tests.integration.inspector.browser import chromium  # noqa: E402

RESULTS = ROOT / "bench" / "results"
MEMORY = "bench-inspector"
WORDS = "The rollout keeps pricing, refunds and tax rates in step across regions. "


def _turn(turn: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"Turn {turn}: where is ticket LTH-{turn}? " + WORDS * 3},
            {"role": "assistant", "content": f"LTH-{turn} is with Dana, {turn * 17} units. " + WORDS * 5}]


def _reply(turn: int, answer: dict[str, Any], notes: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": f"LTH-{turn} is with Dana. " + WORDS * 5}
    if answer["note_ask_turns"] and notes:
        first, last = answer["note_ask_turns"]
        notes = [{"note": f"Turns {first}-{last} moved ticket LTH-{first} to {first * 17} units.",
                  "subject": f"ticket LTH-{first}", "object": f"{first * 17} units", "milestone": first % 10 == 0}]
        message["tool_calls"] = [{"id": f"call_note_{turn}", "type": "function",
                                  "function": {"name": "note", "arguments": json.dumps({"notes": notes})}}]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def grow(client: httpx.Client, episodes: int, batch: int, notes: bool) -> dict[str, Any]:
    """Converse until the memory holds `episodes` episodes; returns its state."""
    at = datetime.now(UTC) - timedelta(days=90)
    turn, calls, started = 0, 0, time.monotonic()
    state: dict[str, Any] = {"episodes": []}
    while len(state["episodes"]) < episodes:
        history: list[dict[str, Any]] = []
        for _ in range(batch - 1):
            turn += 1
            history += _turn(turn)
        turn += 1
        history.append(_turn(turn)[0])
        at += timedelta(hours=25) if turn % 400 < batch else timedelta(minutes=2 * batch)
        now = {"X-Lethe-Now": at.isoformat()}
        decorated = client.post(f"/v1/memories/{MEMORY}/decorate", headers=now,
                                json={"model": "gpt-4o-mini", "messages": history})
        if decorated.status_code != 200:
            raise SystemExit(f"decorate at turn {turn}: {decorated.status_code} {decorated.text[:500]}")
        answer = decorated.json()
        reply = _reply(turn, answer, notes)
        client.post(f"/v1/memories/{MEMORY}/report", headers=now,
                    json={"decorate_id": answer["decorate_id"], "response": reply}).raise_for_status()
        calls += 1
        if calls % 25 == 0:
            state = client.get(f"/v1/memories/{MEMORY}").json()
            print(f"  turn {turn}: {len(state['episodes'])} episodes, {state['facts']} facts "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
    return state


def endpoint_times(client: httpx.Client, repeats: int = 5) -> dict[str, float]:
    """Median server-side time (`Server-Timing`) of each call the page makes when it opens the memory."""
    base = f"/v1/memories/{MEMORY}"
    calls = {"memory": base, "facts": f"{base}/facts", "workflow": f"{base}/workflow",
             "activation": f"{base}/activation?newest=true&limit=150&points=120"}
    times = {}
    for name, path in calls.items():
        samples = []
        for _ in range(repeats):
            response = client.get(path)
            response.raise_for_status()
            samples.append(float(response.headers["Server-Timing"].split("dur=")[1]))
        times[name] = round(statistics.median(samples), 1)
    return times


# Long tasks are recorded from the first byte: the page's own work, not the benchmark's, is what is timed.
INIT = """
sessionStorage.setItem('lethe.apiKey', %s);
window.__longest = 0;
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longest = Math.max(window.__longest,
  e.duration); }).observe({ type: 'longtask', buffered: true });
"""


async def time_loads(url: str, key: str, loads: int) -> list[dict[str, float]]:
    runs = []
    async with chromium() as browser:
        for _ in range(loads):
            context = await browser.new_context(viewport={"width": 1400, "height": 1000})
            await context.add_init_script(INIT % json.dumps(key))
            page = await context.new_page()
            started = time.perf_counter()
            await page.goto(f"{url}/inspect#/m/{MEMORY}")
            await page.wait_for_selector("body[data-ready=yes]", timeout=60_000)
            ready = time.perf_counter() - started
            # A memory past the page's limit leaves its export to a click: "complete" is then the same as ready.
            await page.wait_for_selector("body[data-exported]", timeout=120_000)
            complete = time.perf_counter() - started
            exported = await page.get_attribute("body", "data-exported")
            longest = await page.evaluate("window.__longest")
            shown = await page.locator("#timeline rect.episode").count()
            lines = await page.locator("#activation polyline.series").count()
            runs.append({"ready_s": round(ready, 3), "complete_s": round(complete, 3), "export": exported,
                         "longest_task_ms": round(longest, 1), "episodes_drawn": shown, "activation_lines": lines})
            if len(runs) == 1:
                RESULTS.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=RESULTS / "inspector-bench.png", full_page=True)
            await context.close()
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--ceiling", type=int, default=8000)
    parser.add_argument("--batch", type=int, default=3, help="turns sent per decorate while growing")
    parser.add_argument("--no-notes", action="store_true",
                        help="the model ignores every note ask (episodes seal without facts at the ceiling), so the "
                             "lane judges no fact against thousands of episodes: for growing 10k episodes quickly")
    args = parser.parse_args()

    with running_stack("lethe-bench-inspector-", LETHE_CEILING_TOKENS=str(args.ceiling)) as stack:
        with stack.client() as client:
            started = time.monotonic()
            state = grow(client, args.episodes, args.batch, notes=not args.no_notes)
            grow_s = time.monotonic() - started
            exporting = time.monotonic()
            export_bytes = len(client.get(f"/v1/memories/{MEMORY}/export").content)
            export_s = time.monotonic() - exporting
            server_ms = endpoint_times(client)
        runs = asyncio.run(time_loads(stack.url, stack.key, args.loads))

    warm = runs[1:] or runs
    counts: dict[str, int] = {}
    for episode in state["episodes"]:
        counts[episode["state"]] = counts.get(episode["state"], 0) + 1
    result = {
        "episodes": len(state["episodes"]), "by_state": counts, "messages": state["messages"],
        "facts": state["facts"], "ceiling": args.ceiling, "notes_answered": not args.no_notes,
        "grow_seconds": round(grow_s, 1),
        "export_bytes": export_bytes, "export_seconds": round(export_s, 2),
        "browser": "Debian chromium (/usr/bin/chromium), headless",
        "first_load": runs[0],
        "ready_s": {"median": round(statistics.median(r["ready_s"] for r in warm), 3),
                    "max": max(r["ready_s"] for r in warm)},
        "complete_s": {"median": round(statistics.median(r["complete_s"] for r in warm), 3),
                       "max": max(r["complete_s"] for r in warm)},
        "longest_task_ms": max(r["longest_task_ms"] for r in runs),
        "server_ms_median": server_ms,
        "target_ready_s": 2.0, "runs": runs, "machine": {"cpus": os.cpu_count()},
    }
    print(f"{result['episodes']} episodes {counts}, {result['messages']} messages, {result['facts']} facts "
          f"(grown in {result['grow_seconds']} s; export {export_bytes / 1e6:.1f} MB)")
    print(f"server time per call (median ms): {server_ms}")
    print(f"first load: ready {runs[0]['ready_s']} s, complete {runs[0]['complete_s']} s")
    print(f"warm loads ({len(warm)}): ready median {result['ready_s']['median']} s max {result['ready_s']['max']} s; "
          f"complete median {result['complete_s']['median']} s; longest main-thread task "
          f"{result['longest_task_ms']} ms (target: ready under 2 s)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "inspector.json"
    kept = json.loads(path.read_text()) if path.exists() else {}
    kept = kept if "by_episodes" in kept else {"by_episodes": {}}
    kept["by_episodes"][str(args.episodes)] = result
    path.write_text(json.dumps(kept, indent=2) + "\n")


if __name__ == "__main__":
    main()
