"""No message content in logs by default, whatever the level: the loggers that would print it stay quiet. A line
written inside a span carries its trace and span ids."""

from __future__ import annotations

import json
import logging

import pytest
from opentelemetry.sdk.trace import TracerProvider

from cli.logs import CONTENT_LOGGERS, JsonFormatter, PlainFormatter, configure_logging


def test_content_loggers_show_only_warnings_even_at_debug() -> None:
    configure_logging("DEBUG", json_lines=True)
    try:
        for name in CONTENT_LOGGERS:
            assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
        assert logging.getLogger("lethe.anything").isEnabledFor(logging.DEBUG)
    finally:
        configure_logging("INFO")


def _line(formatter: logging.Formatter, message: str) -> str:
    record = logging.getLogger("lethe.test").makeRecord("lethe.test", logging.INFO, __file__, 1, message, (), None)
    return formatter.format(record)


def test_json_lines_inside_a_span_carry_its_trace_and_span_ids() -> None:
    tracer = TracerProvider().get_tracer("test")  # a real SDK tracer, not the global (no-op) one
    with tracer.start_as_current_span("decorate") as span:
        inside = json.loads(_line(JsonFormatter(), "decorated"))
    ids = span.get_span_context()
    assert inside["trace_id"] == format(ids.trace_id, "032x") and len(inside["trace_id"]) == 32
    assert inside["span_id"] == format(ids.span_id, "016x")
    outside = json.loads(_line(JsonFormatter(), "idle"))
    assert "trace_id" not in outside and "span_id" not in outside


def test_plain_lines_end_with_the_trace_ids_inside_a_span() -> None:
    tracer = TracerProvider().get_tracer("test")
    with tracer.start_as_current_span("report") as span:
        inside = _line(PlainFormatter(), "reported")
    ids = span.get_span_context()
    assert inside.endswith(f"reported trace_id={ids.trace_id:032x} span_id={ids.span_id:016x}")
    assert "trace_id" not in _line(PlainFormatter(), "idle")


def test_configured_logging_writes_the_trace_id(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", json_lines=True)
    tracer = TracerProvider().get_tracer("test")
    try:
        with tracer.start_as_current_span("job") as span:
            logging.getLogger("lethe.test").info("lane job ran", extra={"memory_id": "m-1"})
    finally:
        configure_logging("INFO")  # the handler held this test's captured stderr
    (line,) = [json.loads(text) for text in capsys.readouterr().err.splitlines() if "lane job ran" in text]
    assert line["trace_id"] == f"{span.get_span_context().trace_id:032x}" and line["memory_id"] == "m-1"
