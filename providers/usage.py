"""Token usage of model calls, per tenant and memory, for whoever counts costs.

The OpenAI-compatible providers hand each call's usage to a `UsageSink` when they are given one (the tests
count with `InMemoryUsageSink`). A sink that fails must never fail the judgment or
embedding it accounts for, so providers log and carry on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["InMemoryUsageSink", "Usage", "UsageScope", "UsageSink", "record_usage"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class UsageScope:
    """Whose call this is: usage is charged to this tenant's memory."""

    tenant_id: str
    memory_id: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one model call consumed; `purpose` names the judgment or `embed`."""

    tenant_id: str | None
    memory_id: str | None
    provider: str
    model: str
    purpose: str
    prompt_tokens: int
    completion_tokens: int


class UsageSink(Protocol):
    """Where providers report the usage of every call they make to a model service."""

    async def record(self, usage: Usage) -> None: ...


class InMemoryUsageSink:
    """Keeps every record in a list: for tests, benchmarks and `lethe dev` without a database."""

    def __init__(self) -> None:
        self.records: list[Usage] = []
        self._lock = asyncio.Lock()

    async def record(self, usage: Usage) -> None:
        async with self._lock:
            self.records.append(usage)

    def totals(self, *, purpose: str | None = None) -> tuple[int, int]:
        """(prompt, completion) tokens summed, optionally for one purpose."""
        chosen: Iterable[Usage] = (r for r in self.records if purpose is None or r.purpose == purpose)
        prompt = completion = 0
        for item in chosen:
            prompt += item.prompt_tokens
            completion += item.completion_tokens
        return prompt, completion


async def record_usage(
    sink: UsageSink | None,
    scope: UsageScope | None,
    *,
    provider: str,
    model: str,
    purpose: str,
    prompt_tokens: int,
    completion_tokens: int,
) -> None:
    """Report one call's usage; a failing sink is logged, never raised into the caller's work."""
    if sink is None:
        return
    usage = Usage(
        tenant_id=scope.tenant_id if scope else None,
        memory_id=scope.memory_id if scope else None,
        provider=provider,
        model=model,
        purpose=purpose,
        prompt_tokens=max(0, int(prompt_tokens)),
        completion_tokens=max(0, int(completion_tokens)),
    )
    try:
        await sink.record(usage)
    except Exception:
        logger.exception("usage sink failed", extra={"purpose": purpose, "model": model})
