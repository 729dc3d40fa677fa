"""Per-tenant limits, in each gateway process: a request rate (token bucket) and concurrent decorates.

Both answer 429 with `Retry-After`. They are per replica: with N gateways a tenant gets up to N times the rate,
which is what a limit against a noisy neighbour needs (a hard global quota belongs in front, at the proxy).
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from contracts.errors import RateLimited

__all__ = ["TenantLimits"]


class TenantLimits:
    def __init__(self, *, rate: float, burst: int, max_decorates: int) -> None:
        self.rate, self.burst, self.max_decorates = rate, max(burst, 1), max_decorates
        self._buckets: dict[str, tuple[float, float]] = {}
        self._decorating: dict[str, int] = {}

    def admit(self, tenant_id: str) -> None:
        """Take one request from the tenant's bucket, or refuse with the seconds until one is there."""
        if self.rate <= 0:
            return
        now = time.monotonic()
        tokens, at = self._buckets.get(tenant_id, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1:
            self._buckets[tenant_id] = (tokens, now)
            wait = math.ceil((1 - tokens) / self.rate)
            raise RateLimited(f"over this tenant's {self.rate:g} requests a second (LETHE_TENANT_RATE_PER_SECOND)",
                              retry_after=max(wait, 1))
        self._buckets[tenant_id] = (tokens - 1, now)
        if len(self._buckets) > 100_000:
            # An idle tenant's bucket is full again after burst/rate seconds: forgetting it then changes nothing.
            full = now - self.burst / self.rate
            self._buckets = {t: b for t, b in self._buckets.items() if b[1] > full}

    @asynccontextmanager
    async def decorating(self, tenant_id: str) -> AsyncIterator[None]:
        """Hold one of the tenant's concurrent decorates for the block, or refuse when all are taken."""
        if self.max_decorates <= 0:
            yield
            return
        running = self._decorating.get(tenant_id, 0)
        if running >= self.max_decorates:
            raise RateLimited(f"this tenant already has {running} decorates running "
                              "(LETHE_TENANT_MAX_CONCURRENT_DECORATES)", retry_after=1)
        self._decorating[tenant_id] = running + 1
        try:
            yield
        finally:
            left = self._decorating[tenant_id] - 1
            if left:
                self._decorating[tenant_id] = left
            else:
                del self._decorating[tenant_id]
