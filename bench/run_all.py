"""The whole benchmark suite in one command, bounded in time, printing progress as it goes.

    .venv/bin/python bench/run_all.py            # the whole suite: under 20 minutes on 2 cores (`make bench`)
    .venv/bin/python bench/run_all.py --quick    # a few minutes (`make bench-quick`): smaller sizes, says so

Three embedded stacks (bench/stack.py), one after another: a fresh one for throughput (so the lane's CPU is
the burst's alone), one at the default ceiling (side by side, hot path, cost) and one at 32k (the week, hot path,
cost). What is timed goes first on each: the cost conversations only count tokens, and the lane work they leave
behind would fall on the timed turns. Writes JSON and PNG
plots under bench/results/ and the markdown summary bench/results/summary.md (bench/summary.py). Each benchmark
also runs alone: bench/throughput.py, side_by_side.py, cost.py, hot_path.py, week.py.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the project before bench/ (bench/providers.py)
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import cost  # noqa: E402
import hot_path  # noqa: E402
import side_by_side  # noqa: E402
import throughput  # noqa: E402
import week  # noqa: E402
from stack import RESULTS, running_stack  # noqa: E402
from summary import write_summary  # noqa: E402

PLANS: dict[str, dict[str, Any]] = {
    # Full: under 20 minutes on 2 cores (the growing of the 100,000-message memories takes six of them).
    # lane_settle is the longest wait for the throughput run's lane to finish what the burst sent: at 30 pairs/s
    # the 45 s burst leaves about three minutes of the worker's work, which a 150 s wait cut short.
    "full": {"throughput_seconds": 45, "lane_settle": 300, "side_turns": 80, "cost_tokens": 1_000_000,
             "week_turns": 8, "sizes": [1000, 10000, 100000], "samples": 120, "hot_settle": 10, "tail": 80},
    "quick": {"throughput_seconds": 12, "lane_settle": 90, "side_turns": 30, "cost_tokens": 120_000,
              "week_turns": 5, "sizes": [1000, 10000], "samples": 40, "hot_settle": 3, "tail": 60},
}


def machine() -> dict[str, Any]:
    import psutil

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor()) if Path("/proc/cpuinfo").exists() else ""
    return {"cpus": os.cpu_count(), "cpu_model": model, "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
            "python": platform.python_version(), "system": f"{platform.system()} {platform.release()}",
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few minutes: 1k and 10k messages, a 150k-token "
                                                             "conversation, shorter runs")
    args = parser.parse_args()
    mode = "quick" if args.quick else "full"
    plan = PLANS[mode]
    started = time.monotonic()

    def phase(name: str) -> None:
        print(f"[{time.monotonic() - started:6.0f} s] {name}", flush=True)

    info = {"mode": mode, "plan": plan, "machine": machine(), "started_at": time.strftime("%Y-%m-%d %H:%M UTC",
                                                                                         time.gmtime())}
    phase(f"bench suite ({mode}) on {info['machine']['cpus']} cores, load {info['machine']['load_average_at_start']}")
    RESULTS.mkdir(parents=True, exist_ok=True)

    phase("throughput: a fresh stack, 200 memories at concurrency 32, then the lane's CPU per turn")
    cold: dict[str, float] = {}
    with running_stack("lethe-bench-throughput-") as stack:
        cold["throughput"] = stack.cold_call_ms
        throughput.write(throughput.run(stack, 200, 32, plan["throughput_seconds"], plan["lane_settle"]))

    cost_runs, hot_rows = [], []
    # Like with like: at a ceiling the conversation outgrows, so recall searches for every message as mem0 does.
    phase(f"side by side with mem0 and the floor at a {side_by_side.CEILING:,} ceiling (recall on)")
    with running_stack("lethe-bench-side-", LETHE_RECALL="1", LETHE_CEILING_TOKENS=str(side_by_side.CEILING)) as stack:
        side_by_side.write(side_by_side.run(stack, plan["side_turns"], 10, ceiling=side_by_side.CEILING))

    phase("stack at the default ceiling (recall on)")
    with running_stack("lethe-bench-default-", LETHE_RECALL="1") as stack:
        cold["default ceiling"] = stack.cold_call_ms
        phase(f"hot path at the default ceiling: {plan['sizes']} stored messages")
        hot_rows += hot_path.run(stack, plan["sizes"], plan["samples"], hot_path.DEFAULT_CEILING, plan["hot_settle"],
                                plan["tail"])
        phase(f"cost at the default ceiling: a {plan['cost_tokens']:,}-token conversation")
        cost_runs.append(cost.run(stack, hot_path.DEFAULT_CEILING, plan["cost_tokens"]))

    phase("stack at a 32k ceiling (recall on): one memory over a simulated week")
    with running_stack("lethe-bench-32k-", LETHE_CEILING_TOKENS="32000", LETHE_RECALL="1") as stack:
        cold["32k ceiling"] = stack.cold_call_ms
        result = week.run(stack, plan["week_turns"])
        result["ceiling"] = 32000
        week.write(result)
        phase(f"hot path at 32k: {plan['sizes']} stored messages")
        hot_rows += hot_path.run(stack, plan["sizes"], plan["samples"], 32000, plan["hot_settle"], plan["tail"])
        phase(f"cost at 32k: a {plan['cost_tokens']:,}-token conversation")
        cost_runs.append(cost.run(stack, 32000, plan["cost_tokens"]))

    cost.write(cost_runs, plan["cost_tokens"])
    hot_path.write(hot_rows, plan["samples"])
    info["seconds"] = round(time.monotonic() - started, 1)
    info["cold_start_ms"] = cold
    (RESULTS / "suite.json").write_text(json.dumps(info, indent=2) + "\n")
    phase("summary")
    print(write_summary(RESULTS), flush=True)
    phase(f"done in {info['seconds']:.0f} s; results in {RESULTS}")


if __name__ == "__main__":
    main()
