"""`lethe worker` as deployed (`cli.worker.serve_worker`: its signal handling and graceful shutdown), with a
judge whose boundary scoring takes a few seconds, for tests/integration/test_graceful_shutdown.py.

Run as `python -m tests.slow_judge_worker MARKER SECONDS` with the `LETHE_*` settings in the environment: it
writes "started" to MARKER when a scoring begins and "finished" when it ends.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cli.logs import configure_logging
from cli.worker import build_judge, serve_worker
from config.settings import Settings
from engine.cutting import BoundaryScores
from providers.judge import Judge


class SlowScoring:
    """The configured judge, but each boundary scoring takes `seconds` longer."""

    def __init__(self, judge: Judge, marker: Path, seconds: float) -> None:
        self._judge, self._marker, self._seconds = judge, marker, seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)

    async def score_boundaries(self, units: Sequence[str], **kw: Any) -> list[BoundaryScores]:
        self._marker.write_text("started")
        await asyncio.sleep(self._seconds)
        scores = await self._judge.score_boundaries(units, **kw)
        self._marker.write_text("finished")
        return scores


def main() -> None:
    marker, seconds = Path(sys.argv[1]), float(sys.argv[2])
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    configure_logging("INFO", json_lines=False)
    judge = SlowScoring(build_judge(settings.models), marker, seconds)
    asyncio.run(serve_worker(settings, judge=judge))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
