"""The embedded Postgres (pgvector, pg_trgm) that `lethe dev` and the tests run from a data directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

__all__ = ["EmbeddedPostgres"]


class EmbeddedPostgres:
    """A `pgserver` instance over a unix socket; stopped when `stop()` runs or the process exits."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir).resolve()
        self._server: Any = None

    def start(self) -> str:
        """Start (or reuse) the server and return its SQLAlchemy async URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if "XDG_RUNTIME_DIR" not in os.environ:  # pgserver's platformdirs warns without a private one
            runtime = self.data_dir.parent / "run"
            runtime.mkdir(mode=0o700, exist_ok=True)
            os.environ["XDG_RUNTIME_DIR"] = str(runtime)
        import pgserver  # imported late: only the embedded stack needs it

        self._server = pgserver.get_server(self.data_dir, cleanup_mode="stop")
        return self._server.get_uri().replace("postgresql://", "postgresql+asyncpg://", 1)

    @property
    def pid(self) -> int | None:
        return None if self._server is None else self._server.get_pid()

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None
