"""Recording workflow histories for the replay tests: `LETHE_RECORD_HISTORIES=1` writes them to tests/replay/."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from temporalio.client import Client, WorkflowExecution

HISTORIES = Path(__file__).resolve().parents[2] / "replay" / "histories"


async def record_histories(client: Client, runs: Sequence[WorkflowExecution], name: str) -> None:
    if not os.environ.get("LETHE_RECORD_HISTORIES"):
        return
    HISTORIES.mkdir(parents=True, exist_ok=True)
    ordered = sorted(runs, key=lambda run: run.start_time)
    for index, run in enumerate(ordered):
        history = await client.get_workflow_handle(run.id, run_id=run.run_id).fetch_history()
        (HISTORIES / f"{name}-{index:02d}.json").write_text(history.to_json())
