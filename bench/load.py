"""A bounded load run (locust, loopback only): many memories conversing at once through decorate and report.

Each locust user is one memory: it sends its whole transcript to decorate, reports a scripted reply, and keeps
what it sent. At the end every memory's export is compared with what its user sent: the same messages, once
each, in order. Starts `lethe dev` on free ports with a throwaway data directory unless `--url` and `--key`
name a running gateway.

    make install-bench
    .venv/bin/python bench/load.py --memories 200 --minutes 10 [--pace 20]

Prints throughput, p50/p99 and errors per call, and writes bench/results/load.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import gevent
import httpx
from locust import HttpUser, constant_pacing, events, task
from locust.env import Environment
from locust.stats import stats_history, stats_printer

sys.path.append(str(Path(__file__).resolve().parent))

from stack import RESULTS, start_stack, stop_stack  # noqa: E402

RUN = uuid.uuid4().hex[:8]
SENT: dict[str, list[dict[str, Any]]] = {}
# Calls answered 429 or 503 (or dropped) and tried again, by call and status; a call tries at most RETRIES times.
RETRIED: dict[str, int] = {}
RETRIES = 5


# Seconds from the start of one of a memory's turns to the start of its next: the agent's model call (seconds,
# for a real model) and its own work around it. `--pace 2` asks far more of the gateway than it can do on two
# cores, to see how it sheds load (503 with Retry-After, nothing lost).
PACE_SECONDS = 20.0


class Memory(HttpUser):
    """One memory per user: a conversation at one turn every `--pace` seconds."""

    wait_time = constant_pacing(PACE_SECONDS)
    key = ""

    def on_start(self) -> None:
        self.memory_id = f"load-{RUN}-{len(SENT)}"
        self.transcript: list[dict[str, Any]] = []
        SENT[self.memory_id] = self.transcript
        self.auth = {"Authorization": f"Bearer {self.key}"}

    @task
    def turn(self) -> None:
        n = len(self.transcript) // 2
        user = {"role": "user", "content": f"Turn {n} of {self.memory_id}: the launch checklist item {n * 7} "
                                           f"needs an owner and a date; who takes it?"}
        body = {"model": "gpt-4o-mini", "messages": [*self.transcript, user]}
        decorated = self._call("decorate", body)
        if decorated is None:
            return
        reply = {"role": "assistant", "content": f"Dana takes item {n * 7} by Friday."}
        report = {"decorate_id": decorated.json()["decorate_id"], "response": {"choices": [{"message": reply}]}}
        if self._call("report", report) is None:
            return
        self.transcript += [user, reply]

    def _call(self, name: str, body: dict[str, Any]) -> Any:
        """One call as the client library makes it: an Idempotency-Key, and a 429 or 503 (or a dropped
        connection) retried with the same key after Retry-After. Retries are counted apart; a call that
        still fails after them is an error."""
        headers = {**self.auth, "Idempotency-Key": uuid.uuid4().hex}
        for attempt in range(1, RETRIES + 1):
            with self.client.post(f"/v1/memories/{self.memory_id}/{name}", json=body, headers=headers,
                                  name=name, catch_response=True) as response:
                if response.status_code == 200:
                    return response
                if attempt < RETRIES and response.status_code in (0, 429, 503):
                    response.success()  # not an error yet: the client waits and tries again
                    RETRIED[f"{name} {response.status_code}"] = RETRIED.get(f"{name} {response.status_code}", 0) + 1
                    wait = float(response.headers.get("Retry-After") or 1) if response.status_code else 1.0
                else:
                    response.failure(f"{response.status_code}: {response.text[:200]}")
                    return None
            gevent.sleep(wait)
        return None


def _verify(url: str, key: str) -> dict[str, int]:
    """Every memory's stored messages against what its user sent (and saw answered)."""
    matched = mismatched = 0
    with httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as client:
        for memory_id, sent in SENT.items():
            export = client.get(f"/v1/memories/{memory_id}/export")
            stored = [m["body"] for m in json.loads(export.content)["messages"]] if export.status_code == 200 else []
            # A turn whose report failed was never added to the transcript: its user message may be stored.
            if stored[:len(sent)] == sent and len(stored) - len(sent) <= 1:
                matched += 1
            else:
                mismatched += 1
                print(f"{memory_id}: sent {len(sent)} messages, stored {len(stored)}; first difference at "
                      f"{next((i for i, (a, b) in enumerate(zip(sent, stored, strict=False)) if a != b), None)}")
    return {"memories_matching": matched, "memories_mismatching": mismatched}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--spawn-rate", type=float, default=20.0)
    parser.add_argument("--pace", type=float, default=PACE_SECONDS,
                        help="seconds between the starts of one memory's turns (its model call and its own work)")
    parser.add_argument("--url")
    parser.add_argument("--key")
    args = parser.parse_args()
    stack = None
    if args.url and args.key:
        url, key = args.url, args.key
    else:
        data_dir = Path(tempfile.mkdtemp(prefix="lethe-load-"))
        data_dir.chmod(0o755)
        stack = start_stack(data_dir / "state")
        url, key = stack.url, stack.key
    try:
        Memory.key, Memory.host = key, url
        Memory.wait_time = constant_pacing(args.pace)
        # Users finish the turn they are in when the run ends, so what they sent is what they recorded.
        env = Environment(user_classes=[Memory], events=events, stop_timeout=60)
        runner = env.create_local_runner()
        gevent.spawn(stats_printer(env.stats))
        gevent.spawn(stats_history, runner)
        runner.start(args.memories, spawn_rate=args.spawn_rate)
        started = time.monotonic()
        gevent.sleep(args.minutes * 60)
        elapsed = time.monotonic() - started
        runner.stop()  # waits up to stop_timeout for each user's turn in progress
        runner.quit()
        result: dict[str, Any] = {"memories": args.memories, "seconds": round(elapsed, 1), "pace_seconds": args.pace,
                                  "turns_per_second_asked": round(args.memories / args.pace, 2)}
        for name in ("decorate", "report"):
            entry = env.stats.get(name, "POST")
            result[name] = {
                "requests": entry.num_requests, "failures": entry.num_failures,
                "per_second": round(entry.num_requests / elapsed, 2),
                "p50_ms": entry.get_response_time_percentile(0.5),
                "p99_ms": entry.get_response_time_percentile(0.99),
            }
        # What failed, not only how often: locust keeps one entry per distinct error.
        result["errors"] = [{"name": e.name, "error": str(e.error)[:300], "occurrences": e.occurrences}
                            for e in env.stats.errors.values()]
        result["retried"] = RETRIED
        result.update(_verify(url, key))
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "load.json").write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    finally:
        if stack is not None:
            stop_stack(stack)
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
