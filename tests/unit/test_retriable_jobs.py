"""The gateway accepts a retry of a parked job exactly for the jobs the lane can run again: those it runs for
an event (the gateway does not import the workflow, so the names stand in contracts too)."""

from __future__ import annotations

from contracts.lane_names import RETRIABLE_JOBS
from workflows.jobs import EVENT_JOBS, PREPARE_SLEEP, job_named


def test_the_gateways_retriable_jobs_are_the_lanes_event_jobs() -> None:
    assert set(EVENT_JOBS) == RETRIABLE_JOBS
    assert all(job_named(name) is EVENT_JOBS[name] for name in RETRIABLE_JOBS)
    assert job_named(PREPARE_SLEEP.activity) is None  # a sleep's preparation is tried again at the next sleep
