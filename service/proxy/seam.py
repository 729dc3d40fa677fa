"""The one place the proxy calls decorate and report: the same services the `/v1/memories` routes call."""

from __future__ import annotations

from typing import Any

import orjson

from service import decorate as decorate_service
from service import report as report_service
from service.clock import Clock
from service.context import HotPath
from service.relay import OutboxRelay

__all__ = ["decorate", "report"]


async def decorate(
    ctx: HotPath, relay: OutboxRelay, *, tenant_id: str, memory_id: str, body: dict[str, Any], clock: Clock,
    idempotency_key: str | None, shape: str | None = None, user_id: str | None = None,
) -> dict[str, Any]:
    answer = await decorate_service.decorate(ctx, tenant_id=tenant_id, memory_id=memory_id, body=body, clock=clock,
                                             idempotency_key=idempotency_key, shape=shape, user_id=user_id)
    relay.wake()
    return orjson.loads(answer)  # type: ignore[no-any-return]


async def report(
    ctx: HotPath, relay: OutboxRelay, *, tenant_id: str, memory_id: str, decorate_id: str,
    response: dict[str, Any], clock: Clock, idempotency_key: str | None, user_id: str | None = None,
) -> dict[str, Any]:
    answer = await report_service.report(ctx, tenant_id=tenant_id, memory_id=memory_id, clock=clock,
                                         body={"decorate_id": decorate_id, "response": response},
                                         idempotency_key=idempotency_key, user_id=user_id)
    relay.wake(turn_over=True)
    return orjson.loads(answer)  # type: ignore[no-any-return]
