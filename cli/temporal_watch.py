"""What `lethe dev` does when its Temporal dev server exits on its own: says so, with the end of its log, and
starts it again on the same port and database file, so every memory's workflow carries on where it stood.

While it is away decorate and report keep answering (their events wait in the outbox, which the gateway
delivers once Temporal is back) and the worker reconnects by itself. A server that keeps dying as soon as it
starts (a broken database file, its port taken) is not started forever: `lethe dev` stops, with its log.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

from cli.devstack import RestartPause, start_temporal_dev_server, stop_process
from config.settings import Settings

__all__ = ["TemporalWatch"]

_QUICK_DEATHS_TO_GIVE_UP = 5
_LOG_TAIL_CHARS = 2000


def _how_it_ended(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


class TemporalWatch:
    """Owns the dev server's process: `start` it, `run` the watch until `stop` is set, `stop_server` at the end."""

    def __init__(self, settings: Settings, log_file: Path, *, interval: float = 0.5, backoff: float = 1.0) -> None:
        # `backoff`: the first pause before a start again (`RestartPause`).
        self.settings, self.log_file, self.interval, self.backoff = settings, log_file, interval, backoff
        self.proc: subprocess.Popen[bytes] | None = None
        self.failure: str | None = None
        self._started_at = 0.0

    def start(self) -> subprocess.Popen[bytes]:
        self.proc = start_temporal_dev_server(self.settings, self.log_file)
        self._started_at = time.monotonic()
        return self.proc

    def log_tail(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")[-_LOG_TAIL_CHARS:].rstrip()
        except OSError:
            return "(no log)"

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set; sets it when giving up."""
        restarts = RestartPause(self.backoff)
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.interval)
                return
            except TimeoutError:
                pass
            assert self.proc is not None, "start() comes first"
            code = self.proc.poll()
            if code is None:
                continue
            pause = restarts.after_death(time.monotonic() - self._started_at)
            if restarts.quick_deaths >= _QUICK_DEATHS_TO_GIVE_UP:
                deaths, how = restarts.quick_deaths, _how_it_ended(code)
                self.failure = (f"The Temporal dev server ended {deaths} times in a row right after starting (the "
                                f"last time it {how}); stopping lethe dev. The end of its log ({self.log_file}):\n"
                                f"{self.log_tail()}")
                print(f"\n{self.failure}", flush=True)
                stop.set()
                return
            print(f"\nThe Temporal dev server {_how_it_ended(code)}. The end of its log ({self.log_file}):\n"
                  f"{self.log_tail()}\nStarting it again in {pause:g} s, with the same data; decorate and report "
                  "keep answering, and the lane waits for it.", flush=True)
            try:
                await asyncio.wait_for(stop.wait(), timeout=pause)
                return
            except TimeoutError:
                pass
            print(f"Temporal dev server started again (pid {self.start().pid}).", flush=True)

    def stop_server(self) -> None:
        if self.proc is not None:
            stop_process(self.proc, timeout=15)
