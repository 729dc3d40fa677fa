"""Times every activity the worker runs, by activity name and outcome, into the histogram it is given."""

from __future__ import annotations

import time
from typing import Any

from opentelemetry.metrics import Histogram
from temporalio import activity
from temporalio.worker import ActivityInboundInterceptor, ExecuteActivityInput, Interceptor

__all__ = ["ActivityTiming"]


class _Inbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, histogram: Histogram) -> None:  # noqa: A002
        super().__init__(next)
        self.histogram = histogram

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:  # noqa: A002 - the SDK's name
        started = time.perf_counter()
        outcome = "failed"
        try:
            result = await super().execute_activity(input)
            outcome = "ok"
            return result
        finally:
            self.histogram.record(time.perf_counter() - started,
                                  {"activity": activity.info().activity_type, "outcome": outcome})


class ActivityTiming(Interceptor):
    """The histogram comes from the caller (`service.metrics`), which this layer does not import."""

    def __init__(self, histogram: Histogram) -> None:
        self.histogram = histogram

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:  # noqa: A002
        return _Inbound(next, self.histogram)
