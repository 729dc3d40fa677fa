"""Percentiles as every bench reports them: nearest rank, in milliseconds, rounded to hundredths."""

from __future__ import annotations

import statistics

__all__ = ["percentile", "summary"]


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile: a value that was measured, never an interpolation between two."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": round(statistics.median(values), 2), "p90": round(percentile(values, 0.9), 2),
            "p99": round(percentile(values, 0.99), 2), "max": round(max(values), 2), "n": len(values)}
