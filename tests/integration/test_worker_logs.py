"""`lethe worker` with JSON logs, as deployed, while its Temporal goes away: every line it writes, the Temporal
SDK core's own warnings included, is one JSON object on stderr; nothing reaches stdout."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from config.settings import Settings
from tests.support import dev_server, eventually, fresh_database

ROOT = Path(__file__).resolve().parents[2]


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(errors="replace").splitlines() if line.strip()]


async def test_the_sdk_cores_warnings_are_json_lines_too(settings: Settings, tmp_path: Path) -> None:
    temporal = await dev_server()
    env = {**os.environ, "LETHE_DATABASE_URL": await fresh_database(settings.database.url),
           "LETHE_TEMPORAL_ADDRESS": temporal.client.service_client.config.target_host,
           "LETHE_WORKER_HEALTH_PORT": "0", "LETHE_LOG_JSON": "true", "LETHE_WORKER_GRACEFUL_SHUTDOWN_SECONDS": "1"}
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        worker = subprocess.Popen([sys.executable, "-m", "cli.main", "worker"], cwd=ROOT, env=env,
                                  stdout=stdout, stderr=stderr)
    try:
        async def started() -> bool:
            assert worker.poll() is None, err.read_text()
            return "worker started" in err.read_text()

        await eventually(started, timeout=90)
        await temporal.shutdown()  # the worker's polls now fail and are retried: the core warns

        async def core_warned() -> list[str]:
            return [line for line in _lines(err) if '"logger": "temporalio.core' in line]

        warned = await eventually(core_warned, timeout=60)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            await asyncio.to_thread(worker.wait, 30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()
    assert _lines(out) == []
    entries = [json.loads(line) for line in _lines(err)]  # every line parses
    assert all({"time", "level", "logger", "message"} <= set(entry) for entry in entries)
    core = json.loads(warned[0])
    assert core["level"] == "WARNING" and "poll" in core["message"] and "temporal_log" not in core
