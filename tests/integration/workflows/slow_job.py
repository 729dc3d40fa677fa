"""A job slower than its heartbeat timeout that never reports progress, with and without `heartbeating`, and a
workflow that runs one once (no retries), for tests/integration/workflows/test_slow_job_heartbeats.py. In a
module of its own: the workflow sandbox reimports the module a workflow is defined in."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from activities.heartbeat import heartbeating

HEARTBEAT_TIMEOUT = timedelta(seconds=1)


@activity.defn(name="slow_job_bare")
async def slow_job_bare(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@activity.defn(name="slow_job")
@heartbeating
async def slow_job(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "done"


@workflow.defn
class SlowJobWorkflow:
    @workflow.run
    async def run(self, activity_name: str, seconds: float) -> str:
        try:
            return await workflow.execute_activity(
                activity_name, seconds, result_type=str, start_to_close_timeout=timedelta(seconds=30),
                heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RetryPolicy(maximum_attempts=1))
        except ActivityError as err:
            return f"failed: {err.cause}"
