"""No message content in logs by default, whatever the level: the loggers that would print it stay quiet."""

from __future__ import annotations

import logging

from cli.logs import CONTENT_LOGGERS, configure_logging


def test_content_loggers_show_only_warnings_even_at_debug() -> None:
    configure_logging("DEBUG", json_lines=True)
    try:
        for name in CONTENT_LOGGERS:
            assert not logging.getLogger(name).isEnabledFor(logging.INFO), name
        assert logging.getLogger("lethe.anything").isEnabledFor(logging.DEBUG)
    finally:
        configure_logging("INFO")
