"""Binds each activity to the tenant its input names, so its transactions pass row-level security."""

from __future__ import annotations

from typing import Any

from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from store.db import bind_tenant

__all__ = ["TenantScope"]


def _tenant_of(args: Any) -> str | None:
    for arg in args:
        memory = getattr(arg, "memory", None)
        tenant_id = getattr(memory, "tenant_id", None) or getattr(arg, "tenant_id", None)
        if isinstance(tenant_id, str):
            return tenant_id
    return None


class _Inbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:  # noqa: A002 - the SDK's name
        tenant_id = _tenant_of(input.args)
        if tenant_id is not None:
            # Each activity runs in its own task: the binding ends with it.
            bind_tenant(tenant_id)
        return await super().execute_activity(input)


class TenantScope(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:  # noqa: A002
        return _Inbound(next)
