"""The embedded stack every bench runs against: `lethe dev` on free ports with a throwaway data directory.

    with running_stack("lethe-bench-", LETHE_CEILING_TOKENS="32000") as stack:
        with stack.client() as client: ...

`lethe dev` runs the gateway in its own process and the worker as a child process of it (it prints the
worker's pid), so a bench can read each one's CPU and RSS apart; Postgres and Temporal are processes of their own.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

__all__ = ["Stack", "cpu_facts", "cpu_seconds", "embedded_database", "free_port", "lane_cpu", "rss_mb", "running_stack",
           "start_clocked_stack", "start_stack", "stop_stack", "wait_for_lane", "write_result"]

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
_WORKER = re.compile(r"worker started \(pid (\d+)\)")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Stack:
    proc: subprocess.Popen[str]
    url: str
    key: str
    data_dir: Path
    # The latest worker `lethe dev` started (it starts another if one dies).
    worker_pid: int | None = None
    # The first decorate and report after start, on a memory of their own: the gateway's cold start (first
    # imports, first connections), reported apart so it does not land in any benchmark's figures.
    cold_call_ms: float = 0.0
    log_tail: list[str] = field(default_factory=list)

    @property
    def gateway_pid(self) -> int:
        return self.proc.pid

    def client(self, timeout: float = 600) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.key}"}, timeout=timeout)

    def postgres_url(self) -> str:
        """The stack's own Postgres (pgvector), as a plain libpq URL, for peers measured beside Lethe."""
        from store.embedded import running_url  # the same embedded server, found again by its data directory

        return running_url(self.data_dir / "postgres")


def start_stack(data_dir: Path, env: dict[str, str] | None = None) -> Stack:
    environ = {**os.environ, "LETHE_DATA_DIR": str(data_dir), "LETHE_PORT": str(free_port()),
               "LETHE_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}", "LETHE_TEMPORAL_UI_PORT": str(free_port()),
               **(env or {})}
    proc = subprocess.Popen([str(Path(sys.executable).parent / "lethe"), "dev"], env=environ, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = ""
    while "Ctrl-C stops everything." not in output:
        line = proc.stdout.readline() if proc.stdout else ""
        if not line and proc.poll() is not None:
            raise SystemExit(f"lethe dev failed:\n{output}")
        output += line
    key = re.search(r"API key\s+(\S+)", output).group(1)  # type: ignore[union-attr]
    url = re.search(r"gateway\s+(\S+)", output).group(1)  # type: ignore[union-attr]
    stack = Stack(proc, url, key, data_dir)
    _note_worker(stack, output)
    # Keep reading its log: a full pipe would block the stack's next write, and with it a call in progress.
    threading.Thread(target=_drain, args=(stack,), daemon=True).start()
    _warm(stack)
    return stack


def start_clocked_stack(prefix: str, ceiling: int) -> tuple[Stack, Path, str]:
    """A stack at `ceiling` whose calls may set their time (`X-Lethe-Now`), in a new data directory, with an
    admin token of its own: the stack, the data directory (erase it when done) and the token."""
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    data_dir.chmod(0o755)
    admin = secrets.token_urlsafe(18)
    os.environ.update({"LETHE_CEILING_TOKENS": str(ceiling), "LETHE_ALLOW_CLOCK_OVERRIDE": "true",
                       "LETHE_ADMIN_TOKEN": admin})
    return start_stack(data_dir / "state"), data_dir, admin


def _warm(stack: Stack) -> None:
    started = time.perf_counter()
    with stack.client() as client:
        decorated = client.post("/v1/memories/bench-warm-up/decorate", json={
            "model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hello."}]}).raise_for_status()
        client.post("/v1/memories/bench-warm-up/report", json={
            "decorate_id": decorated.json()["decorate_id"],
            "response": {"choices": [{"message": {"role": "assistant", "content": "Hello."}}]}}).raise_for_status()
    stack.cold_call_ms = round((time.perf_counter() - started) * 1000, 1)
    print(f"  stack up at {stack.url}; first decorate+report (cold start) {stack.cold_call_ms} ms", flush=True)


def _note_worker(stack: Stack, text: str) -> None:
    for match in _WORKER.finditer(text):
        stack.worker_pid = int(match.group(1))


def _drain(stack: Stack) -> None:
    # The whole log is kept under bench/results/logs/, named for the run's data directory: an error a run
    # counts can be read there after the data directory is gone.
    logs = RESULTS / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{stack.data_dir.parent.name}.log").open("a") as kept:
        for line in stack.proc.stdout or ():
            _note_worker(stack, line)
            stack.log_tail = [*stack.log_tail[-49:], line]
            kept.write(line)
            kept.flush()


def stop_stack(stack: Stack) -> None:
    stack.proc.send_signal(signal.SIGINT)
    try:
        stack.proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        stack.proc.kill()


@contextmanager
def running_stack(prefix: str = "lethe-bench-", **env: str) -> Iterator[Stack]:
    """A stack with these LETHE_* settings on top of the environment's, stopped and erased afterwards."""
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    data_dir.chmod(0o755)
    stack = start_stack(data_dir / "state", env)
    try:
        yield stack
    finally:
        stop_stack(stack)
        shutil.rmtree(data_dir, ignore_errors=True)


def cpu_facts() -> dict[str, Any]:
    """The machine a figure was made on: cores, CPU model and the vector flags that change the embedder's and
    pgvector's speed."""
    import platform

    model, flags = "", []
    try:
        info = Path("/proc/cpuinfo").read_text()
        model = next((ln.split(":", 1)[1].strip() for ln in info.splitlines() if ln.startswith("model name")), "")
        line = next((ln for ln in info.splitlines() if ln.startswith("flags")), "")
        flags = sorted({f for f in line.split() if f.startswith(("avx", "fma", "sse4"))})
    except OSError:
        pass
    return {"cpus": os.cpu_count(), "cpu_model": model or platform.processor(), "cpu_flags": flags,
            "machine": platform.machine()}


def cpu_seconds(pid: int | None, children: bool = False) -> float:
    """User plus system CPU of a process so far (0 when it is gone), with its live children's when asked."""
    import psutil

    try:
        process = psutil.Process(pid) if pid else None
        if process is None:
            return 0.0
        processes = [process, *(process.children(recursive=True) if children else [])]
        return sum(t.user + t.system for t in (p.cpu_times() for p in processes))
    except psutil.Error:
        return 0.0


def rss_mb(pid: int | None) -> float:
    import psutil

    try:
        return round(psutil.Process(pid).memory_info().rss / 2**20, 1) if pid else 0.0
    except psutil.Error:
        return 0.0


def wait_for_lane(stack: Stack, timeout: float, quiet: float = 0.25, every: float = 1.0) -> float:
    """Wait until the worker's CPU goes quiet (under `quiet` of a core for two readings in a row): the lane has
    caught up with what was sent. Returns the seconds waited (`timeout` when it never went quiet)."""
    started = time.monotonic()
    last, calm = cpu_seconds(stack.worker_pid, children=True), 0
    while time.monotonic() - started < timeout:
        time.sleep(every)
        now = cpu_seconds(stack.worker_pid, children=True)
        calm = calm + 1 if now - last < quiet * every else 0
        last = now
        if calm >= 2:
            break
    return time.monotonic() - started


def write_result(out: Path | str, results: Any) -> Path:
    """A bench's JSON, written where asked (directories made), and said."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written {path}")
    return path


@asynccontextmanager
async def embedded_database(prefix: str, **options: Any) -> AsyncIterator[Any]:
    """For in-process benches (no gateway, no worker): an embedded Postgres of their own, migrated to head, as a
    `store.db.Database`; stopped and erased afterwards."""
    from store.db import Database
    from store.embedded import EmbeddedPostgres
    from store.migrate import upgrade_to_head

    root = Path(tempfile.mkdtemp(prefix=prefix))
    root.chmod(0o755)
    postgres = EmbeddedPostgres(root / "postgres")
    try:
        url = postgres.start()
        await upgrade_to_head(url)
        db = Database(url, **options)
        try:
            yield db
        finally:
            await db.dispose()
    finally:
        postgres.stop()
        shutil.rmtree(root, ignore_errors=True)


def lane_cpu(stack: Stack, drive: Callable[[], int], settle: float) -> dict[str, Any]:
    """The worker's CPU for what `drive` sends (it returns the turns it made): from the start of the drive until
    the worker goes quiet again, less the worker's idle rate measured just before. Per turn, in ms."""
    quiet = wait_for_lane(stack, settle) < settle
    # The floor of four one-second readings: a reading that still caught the end of earlier work (the worker's
    # start-up, a previous bench's jobs) would be taken off the drive's CPU as if it were idle.
    readings = []
    for _ in range(4):
        idle_from, rest = cpu_seconds(stack.worker_pid, children=True), time.monotonic()
        time.sleep(1)
        readings.append((cpu_seconds(stack.worker_pid, children=True) - idle_from) / (time.monotonic() - rest))
    # A lane still working through earlier jobs has no idle rate to take off: the figure then holds some of that
    # work too, an upper bound (`lane_quiet_before` false), never a rate taken off twice into a negative.
    idle_rate = min(readings) if quiet else 0.0
    worker_from, started = cpu_seconds(stack.worker_pid, children=True), time.monotonic()
    turns = drive()
    waited = wait_for_lane(stack, settle)
    spent = max(0.0, cpu_seconds(stack.worker_pid, children=True) - worker_from
                - idle_rate * (time.monotonic() - started))
    return {"turns": turns, "lane_cpu_ms_per_turn": round(spent / max(1, turns) * 1000, 1),
            "worker_idle_cpu_share": round(idle_rate, 3), "lane_quiet_before": quiet, "lane_caught_up": waited < settle,
            "lane_catch_up_seconds": round(waited, 1)}
