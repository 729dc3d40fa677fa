"""What `lethe dev` says when its embedded Postgres crashes: the log line that explains it, in the terminal.

A server process killed by a signal takes every other connection with it; Postgres then restarts its processes
and recovers by itself, while the gateway answers 503. An illegal instruction would only happen again on the
next query of the same kind, and a postmaster that died takes the whole database away: in both cases `lethe
dev` stops everything it started, rather than serve errors.
"""

from __future__ import annotations

import asyncio
import re

from store.embedded import EmbeddedPostgres, Postmaster, crash_lines, explain_crash, log_size, read_log

__all__ = ["PostgresWatch"]

_READY = "database system is ready to accept connections"
_SIGILL = re.compile(r"terminated by signal 4\b")


class PostgresWatch:
    """Reads the server's log from where it stands now, every `interval` seconds, until `stop` is set."""

    def __init__(self, postgres: EmbeddedPostgres, stop: asyncio.Event, *, interval: float = 0.5) -> None:
        self.postgres, self.stop, self.interval = postgres, stop, interval
        self.failure: str | None = None
        self._offset = log_size(postgres.log_file)
        self._recovering = False

    def _read_new(self) -> str:
        data = read_log(self.postgres.log_file, self._offset)
        # Only whole lines: the rest is read on the next pass.
        whole = data[: data.rfind(b"\n") + 1]
        self._offset += len(whole)
        return whole.decode(errors="replace")

    async def run(self) -> None:
        while not self.stop.is_set():
            try:
                await asyncio.wait_for(self.stop.wait(), timeout=self.interval)
            except TimeoutError:
                pass
            self.check()

    def check(self) -> None:
        """One pass: report new crash lines and recoveries; set `failure` and `stop` when dev must end."""
        text = self._read_new()
        for line in crash_lines(text):
            print(f"\nPostgres: {line}\n  That is {explain_crash(line)}", flush=True)
            if _SIGILL.search(line):
                self._fail(f"Postgres crashed on an illegal instruction; stopping lethe dev.\n  {line}")
                return
            self._recovering = True
            print("  Postgres is recovering by itself; until it is back the gateway answers 503 with Retry-After.",
                  flush=True)
        if self._recovering and _READY in text.rsplit("terminated by signal", 1)[-1]:
            self._recovering = False
            print("Postgres recovered: the gateway answers again.", flush=True)
        pid = self.postgres.pid
        found = Postmaster.read(self.postgres.data_dir)
        if pid is not None and (found is None or found.pid != pid or not found.alive()):
            self._fail(f"Postgres stopped unexpectedly; stopping lethe dev. The end of its log "
                       f"({self.postgres.log_file}):\n{self.postgres.log_tail()}")

    def _fail(self, message: str) -> None:
        self.failure = message
        print(f"\n{message}", flush=True)
        self.stop.set()
