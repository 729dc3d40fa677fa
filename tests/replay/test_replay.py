"""Recorded histories of `MemoryWorkflow` must replay on the current code: a change that would break running
workflows fails here first (docs/operating.md, "Changing workflow code safely": guard such changes with
`workflow.patched`).

Record new ones with `LETHE_RECORD_HISTORIES=1 make test` (tests/integration/workflows/recorded.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from cli.converter import lethe_data_converter
from workflows.memory import MemoryWorkflow

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))


def test_histories_are_recorded() -> None:
    assert HISTORIES, "tests/replay/histories holds no recorded histories"


@pytest.mark.parametrize("path", HISTORIES, ids=[p.stem for p in HISTORIES])
async def test_recorded_history_replays(path: Path) -> None:
    replayer = Replayer(workflows=[MemoryWorkflow], data_converter=lethe_data_converter)
    history = WorkflowHistory.from_json(f"memory/replay/{path.stem}", path.read_text())
    await replayer.replay_workflow(history)
