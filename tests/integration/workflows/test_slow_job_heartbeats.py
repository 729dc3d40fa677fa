"""A lane job slower than its heartbeat timeout (one batch of a bulk import's scoring on a saturated worker) is
not cancelled as if its worker had died: `activities.heartbeat.heartbeating` keeps it alive, on the real
Temporal dev server. Without it the same job fails on its heartbeat timeout, and the lane would park it."""

from __future__ import annotations

import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from activities.graph import GraphActivities
from activities.lane import LaneActivities
from tests.integration.workflows.slow_job import HEARTBEAT_TIMEOUT, SlowJobWorkflow, slow_job, slow_job_bare
from workflows import jobs

SLOWER_THAN_TIMEOUT = HEARTBEAT_TIMEOUT.total_seconds() * 2.5


async def test_a_slow_job_that_reports_no_progress_outlives_its_heartbeat_timeout(temporal_client: Client) -> None:
    queue = "slow-job-" + uuid.uuid4().hex[:8]
    async with Worker(temporal_client, task_queue=queue, workflows=[SlowJobWorkflow],
                      activities=[slow_job, slow_job_bare]):
        async def run(name: str) -> str:
            return await temporal_client.execute_workflow(
                SlowJobWorkflow.run, args=[name, SLOWER_THAN_TIMEOUT], id=f"{queue}-{name}", task_queue=queue)

        bare, kept = await run("slow_job_bare"), await run("slow_job")
    assert bare.startswith("failed") and "eartbeat" in bare, bare  # the failure the lane used to park
    assert kept == "done"


def test_every_lane_job_with_a_heartbeat_timeout_heartbeats_on_its_own() -> None:
    registered = {name: getattr(cls, name) for cls in (LaneActivities, GraphActivities) for name in dir(cls)}
    with_timeout = [job for job in vars(jobs).values() if isinstance(job, jobs.Job) and job.heartbeat]
    assert with_timeout
    for job in with_timeout:
        assert hasattr(registered[job.activity], "__wrapped__"), f"{job.activity} has no heartbeating"
