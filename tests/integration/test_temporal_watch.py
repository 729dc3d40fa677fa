"""`lethe dev`'s watch on its Temporal dev server, with the real server: one that cannot start (its port is taken
by another program) is started again a few times, then given up with the reason from its log, not forever."""

from __future__ import annotations

import asyncio
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.temporal_watch import TemporalWatch
from config.settings import Settings
from tests.support import free_port


@pytest.fixture
def data_dir() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="lethe-test-temporal-watch-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_a_server_that_keeps_dying_at_start_is_given_up_with_its_log(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        settings = Settings(_env_file=None, data_dir=data_dir,  # type: ignore[call-arg]
                            temporal_address=f"127.0.0.1:{taken.getsockname()[1]}", temporal_ui_port=free_port())
        watch = TemporalWatch(settings, data_dir / "temporal.log", interval=0.05, backoff=0.05)
        first = watch.start()
        stop = asyncio.Event()
        await asyncio.wait_for(watch.run(stop), timeout=120)
    assert stop.is_set()  # lethe dev stops
    assert first.returncode is not None and watch.proc is not None and watch.proc.poll() is not None
    assert watch.failure is not None
    assert watch.failure.startswith("The Temporal dev server ended 5 times in a row right after starting")
    assert "address already in use" in watch.failure  # the reason, from its log
    assert capsys.readouterr().out.count("Temporal dev server started again") == 4
