"""Faults under load, the short drill (tests/fault_drill.py): several memories converse while the worker is
killed and restarted, Temporal is stopped and started again, and Postgres is stopped and started again. Every
turn is stored exactly once, in order; during the Postgres outage calls answer 503 with Retry-After and their
retries succeed after it; the lane catches up. `bench/faults.py` runs the issue's long drill (30 s, 15 s)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from tests.fault_drill import DrillPlan, run_drill

# The suite keeps the outages short; LETHE_TEST_OUTAGE_SECONDS lengthens both.
OUTAGE_SECONDS = float(os.environ.get("LETHE_TEST_OUTAGE_SECONDS", "3"))


async def test_worker_temporal_and_postgres_faults_lose_and_repeat_nothing() -> None:
    root = Path(tempfile.mkdtemp(prefix="lethe-test-faults-"))
    root.chmod(0o755)  # Postgres runs as its own system user and must reach its data
    try:
        report = await run_drill(root, DrillPlan(memories=4, temporal_down_seconds=OUTAGE_SECONDS,
                                                 postgres_down_seconds=OUTAGE_SECONDS))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert report.other_errors == []
    assert report.stored_exactly_once_in_order == {f"m{i}": True for i in range(4)}, report.as_json()
    assert report.worker_restarted
    # Decorate and report answer while the worker is dead and while Temporal is down.
    assert report.answered.get("worker-killed", 0) > 0 and report.answered.get("temporal-down", 0) > 0
    assert report.unavailable.get("temporal-down", 0) == 0
    # Postgres down: 503 with Retry-After, and the retried calls succeeded afterwards.
    assert report.unavailable.get("postgres-down", 0) > 0 and report.unavailable_with_retry_after
    assert report.answered.get("after", 0) > 0
    assert report.lane_caught_up_seconds is not None and report.parked_jobs == 0, report.as_json()
