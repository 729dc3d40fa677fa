"""Lethe's Python client: `from lethe.client import Lethe, AsyncLethe, wrap`."""

from lethe.client import (
    AsyncLethe,
    DecorateResult,
    Erased,
    FactForgotten,
    FactHit,
    FactHits,
    FactRecord,
    Facts,
    FactWritten,
    Lethe,
    LetheAPIError,
    MemoryState,
    ReportResult,
    wrap,
)

__all__ = ["AsyncLethe", "DecorateResult", "Erased", "FactForgotten", "FactHit", "FactHits", "FactRecord", "Facts",
           "FactWritten", "Lethe", "LetheAPIError", "MemoryState", "ReportResult", "wrap"]
