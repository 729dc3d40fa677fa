"""Decorate and report latency on the embedded stack, over real HTTP, at 1k and 10k stored messages.

Starts `lethe dev` on free ports with a throwaway data directory, grows one memory per size through the
API itself (past turns imported 25 to a decorate, the last ones live; a model that answers every note ask),
then times decorate and report server-side (the gateway's `Server-Timing` header) for a run of further
turns, each sending only its new message. The worker runs in the same process, as in `lethe dev`.

    .venv/bin/python bench/hot_path.py [--sizes 1000 10000] [--samples 200] [--recall on|off]

Prints a table and writes bench/results/hot_path.json (hot_path_recall_off.json with `--recall off`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
FILLER = "The rollout plan keeps the pricing table, the refund line and the tax rates in step across regions. "


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start_stack(data_dir: Path, recall: str = "on") -> tuple[subprocess.Popen[str], str, str]:
    env = {**os.environ, "LETHE_RECALL": "true" if recall == "on" else "false",
           "LETHE_DATA_DIR": str(data_dir), "LETHE_PORT": str(_free_port()),
           "LETHE_TEMPORAL_ADDRESS": f"127.0.0.1:{_free_port()}", "LETHE_TEMPORAL_UI_PORT": str(_free_port())}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "lethe"), "dev"], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = ""
    while "Ctrl-C stops everything." not in output:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line and proc.poll() is not None:
            raise SystemExit(f"lethe dev failed:\n{output}")
        output += line
    key = re.search(r"API key\s+(\S+)", output).group(1)  # type: ignore[union-attr]
    url = re.search(r"gateway\s+(\S+)", output).group(1)  # type: ignore[union-attr]
    # Keep reading its log: a full pipe would block the stack's next write, and with it a call in progress.
    threading.Thread(target=_drain, args=(proc,), daemon=True).start()
    return proc, url, key


def _drain(proc: subprocess.Popen[str]) -> None:
    for _ in proc.stdout or ():
        pass


def _note(turns: list[int]) -> dict[str, Any]:
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
        message["tool_calls"] = [_note(answer["note_ask_turns"])]
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": answer["estimated_tokens"], "completion_tokens": 30}}


class Conversation:
    """One memory, driven turn by turn: a user message, decorate, a scripted reply, report."""

    def __init__(self, client: httpx.Client, memory_id: str) -> None:
        self.client, self.memory_id, self.turn = client, memory_id, 0

    def _call(self, history: list[dict[str, Any]]) -> tuple[httpx.Response, httpx.Response, int]:
        decorated = self.client.post(f"/v1/memories/{self.memory_id}/decorate",
                                     json={"model": "gpt-4o-mini", "messages": history})
        decorated.raise_for_status()
        answer = decorated.json()
        reply = reply_message(self.turn, answer)
        reported = self.client.post(f"/v1/memories/{self.memory_id}/report",
                                    json={"decorate_id": answer["decorate_id"], "response": reply})
        reported.raise_for_status()
        return decorated, reported, 1 + len(reply["choices"][0]["message"].get("tool_calls") or [])

    def import_turns(self, turns: int) -> int:
        """Grow the memory fast: one decorate carrying many past turns, then its report. Returns how many
        messages that stored."""
        history, self.turn = import_history(self.turn, turns)
        return len(history) + self._call(history)[2]

    def step(self) -> tuple[float, float, int]:
        self.turn += 1
        decorated, reported, replies = self._call([step_message(self.turn)])
        return _server_ms(decorated), _server_ms(reported), 1 + replies


def _server_ms(response: httpx.Response) -> float:
    return float(response.headers["Server-Timing"].split("dur=")[1])


def _summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 2), "p90": round(_percentile(values, 0.9), 2),
            "p99": round(_percentile(values, 0.99), 2), "max": round(max(values), 2)}


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--recall", choices=["on", "off"], default="on",
                        help="recall for each new user message (LETHE_RECALL); off times decorate without it")
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="lethe-bench-"))
    data_dir.chmod(0o755)
    proc, url, key = _start_stack(data_dir / "state", args.recall)
    results: dict[str, Any] = {"sizes": {}, "samples": args.samples, "recall": args.recall,
                               "machine": {"cpus": os.cpu_count()}}
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=600) as client:
            for size in args.sizes:
                conversation = Conversation(client, f"bench-{size}")
                stored, started = 0, time.monotonic()
                while stored < size - 200:
                    stored += conversation.import_turns(min(25, max(1, (size - 200 - stored) // 2)))
                while stored < size:  # the last stretch turn by turn, so recent turns look like live ones
                    stored += conversation.step()[2]
                grow_s = time.monotonic() - started
                decorate_ms, report_ms = [], []
                for _ in range(args.samples):
                    d, r, _ = conversation.step()
                    decorate_ms.append(d)
                    report_ms.append(r)
                state = client.get(f"/v1/memories/bench-{size}").json()
                row = {
                    "stored_messages": state["messages"], "episodes": len(state["episodes"]),
                    "facts": state["facts"], "grow_seconds": round(grow_s, 1),
                    "decorate_ms": _summary(decorate_ms),
                    "report_ms": _summary(report_ms),
                }
                results["sizes"][str(size)] = row
                print(f"{row['stored_messages']:>6} messages ({row['episodes']} episodes, {row['facts']} facts): "
                      f"decorate p50 {row['decorate_ms']['p50']} ms p90 {row['decorate_ms']['p90']} ms "
                      f"p99 {row['decorate_ms']['p99']} ms max {row['decorate_ms']['max']} ms; "
                      f"report p50 {row['report_ms']['p50']} ms p99 {row['report_ms']['p99']} ms", flush=True)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data_dir, ignore_errors=True)
    sizes = list(results["sizes"].values())
    if len(sizes) >= 2:
        results["decorate_p99_ratio_largest_to_smallest"] = round(
            sizes[-1]["decorate_ms"]["p99"] / sizes[0]["decorate_ms"]["p99"], 2)
        print(f"decorate p99 ratio, largest to smallest: {results['decorate_p99_ratio_largest_to_smallest']}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    name = "hot_path.json" if args.recall == "on" else "hot_path_recall_off.json"
    (RESULTS / name).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
