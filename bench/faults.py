"""Faults under load, the issue's long drill: several memories converse through decorate and report while the
worker is killed with SIGKILL (its supervisor starts it again), Temporal is down for 30 s (the dev server stopped
and started again on the same port and database file) and Postgres is down for 15 s.

    .venv/bin/python bench/faults.py [--memories 8] [--temporal-seconds 30] [--postgres-seconds 15]

Prints what it checked and writes bench/results/faults.json. The suite runs the same drill with 3 s outages
(tests/integration/security/test_faults_under_load.py); the drill itself is tests/fault_drill.py.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fault_drill import DrillPlan, run_drill  # noqa: E402

RESULTS = ROOT / "bench" / "results"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=8)
    parser.add_argument("--temporal-seconds", type=float, default=30.0)
    parser.add_argument("--postgres-seconds", type=float, default=15.0)
    parser.add_argument("--turns-after", type=int, default=3)
    args = parser.parse_args()
    plan = DrillPlan(memories=args.memories, temporal_down_seconds=args.temporal_seconds,
                     postgres_down_seconds=args.postgres_seconds, turns_after=args.turns_after,
                     catch_up_seconds=180.0)
    root = Path(tempfile.mkdtemp(prefix="lethe-bench-faults-"))
    root.chmod(0o755)  # Postgres runs as its own system user and must reach its data
    try:
        report = asyncio.run(run_drill(root, plan))
    finally:
        shutil.rmtree(root, ignore_errors=True)

    checks = {
        "every turn stored exactly once, in order": all(report.stored_exactly_once_in_order.values())
        and len(report.stored_exactly_once_in_order) == plan.memories,
        "no answer but 200 or 503": not report.other_errors,
        "the worker was started again after SIGKILL": report.worker_restarted,
        "decorate and report answered while the worker was dead": report.answered.get("worker-killed", 0) > 0,
        "decorate and report answered while Temporal was down": report.answered.get("temporal-down", 0) > 0
        and not report.unavailable.get("temporal-down"),
        "503 with Retry-After while Postgres was down": report.unavailable.get("postgres-down", 0) > 0
        and report.unavailable_with_retry_after,
        "retried calls succeeded after the Postgres outage": report.answered.get("after", 0) > 0,
        "the lane caught up (every event processed, none parked)": report.lane_caught_up_seconds is not None
        and report.parked_jobs == 0,
    }
    for name, held in checks.items():
        print(f"{'ok  ' if held else 'FAIL'} {name}")
    print(f"turns per memory: {report.turns}")
    print(f"answered per phase: {report.answered}; 503 per phase: {report.unavailable}")
    print(f"lane caught up {report.lane_caught_up_seconds} s after the load ended; seconds: {report.seconds}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "faults.json").write_text(json.dumps({**asdict(report), "checks": checks}, indent=2) + "\n")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
