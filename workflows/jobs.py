"""The lane's jobs and which event kinds trigger them: adding a job kind is one `Job` and one line below.

Each job is an activity of `activities.lane.LaneActivities`, idempotent by its ids, taking a `JobInput`.
An event kind not listed (one a newer gateway writes) runs no jobs: it is recorded as processed and ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta

from temporalio.common import RetryPolicy

__all__ = [
    "CUT_HISTORY",
    "DISTILL_RECALL",
    "EVENT_JOBS",
    "GRAPH_PATCH",
    "INDEX_QUIET_TURNS",
    "JOBS_BY_KIND",
    "JUDGE_SALIENCE",
    "Job",
    "LANE_RETRY",
    "PREPARE_RECALL",
    "PREPARE_SLEEP",
    "RECALL_AHEAD_PATCH",
    "RECALL_PATCH",
    "SALIENCE_PATCH",
    "SCORE_BOUNDARIES",
    "SCORE_TRACES",
    "UPDATE_GRAPH",
    "USER_IDLE_PATCH",
    "job_named",
    "jobs_for",
]

# Bad data never heals by retrying; a memory erased under the lane is not coming back.
NOT_RETRYABLE = ["BadData", "NotFound", "InvalidInput", "IllegalTransition"]

# The lane's own bookkeeping (read events, record them, park) retries until Postgres answers: giving up
# there would lose the order. Jobs give up after a few attempts and are parked instead.
LANE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30),
    non_retryable_error_types=NOT_RETRYABLE,
)
# A judge that timed out or answered junk usually does better on the next try; five tries is plenty.
JUDGE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=2), maximum_interval=timedelta(seconds=60), maximum_attempts=5,
    non_retryable_error_types=NOT_RETRYABLE,
)
DATABASE_RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30), maximum_attempts=10,
    non_retryable_error_types=NOT_RETRYABLE,
)


@dataclass(frozen=True)
class Job:
    """An activity the lane runs for an event, with its timeouts and retry policy."""

    activity: str
    start_to_close: timedelta
    retry: RetryPolicy
    # Long jobs heartbeat, so a worker that died mid-job is noticed in seconds, not at the timeout.
    heartbeat: timedelta | None = None


SCORE_BOUNDARIES = Job("score_boundaries", timedelta(minutes=5), JUDGE_RETRY, heartbeat=timedelta(seconds=10))
CUT_HISTORY = Job("cut_history", timedelta(seconds=60), DATABASE_RETRY)
SCORE_TRACES = Job("score_traces", timedelta(minutes=10), JUDGE_RETRY, heartbeat=timedelta(seconds=10))
# Facts into the knowledge graph (entities, merges, retirements) and sealed episodes into passages.
UPDATE_GRAPH = Job("update_graph", timedelta(minutes=10), JUDGE_RETRY, heartbeat=timedelta(seconds=20))
# Not triggered by an event: the sleep timer runs it.
PREPARE_SLEEP = Job("prepare_sleep", timedelta(minutes=10), JUDGE_RETRY, heartbeat=timedelta(seconds=10))

JOBS_BY_KIND: Mapping[str, tuple[Job, ...]] = {
    # A new user message closes the turn before it: score the units that just closed.
    "decorate": (SCORE_BOUNDARIES,),
    # After a reply, cut once enough uncut closed history has built up.
    "report": (CUT_HISTORY,),
    # Each newly written fact against every remembered episode.
    "facts_written": (SCORE_TRACES,),
}


# With the graph (workflow patch `GRAPH_PATCH`): episodes seal at a decorate, facts arrive with a report.
GRAPH_JOBS_BY_KIND: Mapping[str, tuple[Job, ...]] = {
    "decorate": (SCORE_BOUNDARIES, UPDATE_GRAPH),
    "report": (CUT_HISTORY,),
    "facts_written": (UPDATE_GRAPH, SCORE_TRACES),
    # A user's graph: facts fed from the user's conversations (`store.repositories.users.feed_user_graph`).
    "fed": (UPDATE_GRAPH,),
    # A memory rebuilt from its export: its vectors are embedded again (`store.repositories.vectors`).
    "imported": (UPDATE_GRAPH,),
}
GRAPH_PATCH = "knowledge-graph"

# Recall (workflow patch `RECALL_PATCH`): a new user message lets the last turn's block be distilled; after a
# reply, the walk for the next message is prepared. Both come after the jobs already there.
DISTILL_RECALL = Job("distill_recall", timedelta(minutes=5), JUDGE_RETRY, heartbeat=None)
PREPARE_RECALL = Job("prepare_recall", timedelta(minutes=5), JUDGE_RETRY, heartbeat=None)
RECALL_JOBS_BY_KIND: Mapping[str, tuple[Job, ...]] = {
    "decorate": (DISTILL_RECALL,),
    "report": (PREPARE_RECALL,),
}
RECALL_PATCH = "recall"


# Recall ahead (workflow patch `RECALL_AHEAD_PATCH`): the walk is prepared beside the lane as soon as a reply
# is announced, not when the lane reaches its report. A walk prepared behind a backlog (a bulk import, a slow
# judge) comes after the next message and is worthless; prepare_recall only reads the graph and writes its
# own row, so it races no job. The report then runs its other jobs in order as before.
RECALL_AHEAD_PATCH = "recall-ahead"


# Salience (workflow patch `SALIENCE_PATCH`): the acts of episodes cut since, last: a decorate's fade may have cut
# some, and a report's cut_history does. Judged once each, so running it after both costs one query when none is new.
JUDGE_SALIENCE = Job("judge_salience", timedelta(minutes=10), JUDGE_RETRY, heartbeat=timedelta(seconds=10))
SALIENCE_JOBS_BY_KIND: Mapping[str, tuple[Job, ...]] = {
    "decorate": (JUDGE_SALIENCE,),
    "report": (JUDGE_SALIENCE,),
}
SALIENCE_PATCH = "salience"


# The idle gate (workflow patch `USER_IDLE_PATCH`, issue #37): not triggered by an event, the workflow's timer
# runs it when a conversation of a user has had no user message for the idle period.
INDEX_QUIET_TURNS = Job("index_quiet_turns", timedelta(minutes=5), DATABASE_RETRY)
USER_IDLE_PATCH = "user-idle-gate"


# Every job the lane runs for an event, by its activity's name: what a retry of a parked job may name
# (contracts.lane_names.RETRIABLE_JOBS, which the gateway checks against, holds the same names).
EVENT_JOBS: Mapping[str, Job] = {
    job.activity: job for table in (JOBS_BY_KIND, GRAPH_JOBS_BY_KIND, RECALL_JOBS_BY_KIND, SALIENCE_JOBS_BY_KIND)
    for jobs in table.values() for job in jobs
}


def job_named(name: str) -> Job | None:
    """The job whose activity is `name` (a parked job retried by hand), or None for one the lane does not run."""
    return EVENT_JOBS.get(name)


def jobs_for(kind: str, *, graph: bool = True, recall: bool = True, ahead: bool = False,
             salience: bool = True) -> tuple[Job, ...]:
    """The jobs of an event kind; `graph=False` / `recall=False` / `salience=False` for histories recorded before
    those jobs, `ahead=True` when the walk is prepared beside the lane (then no event runs it)."""
    jobs = (GRAPH_JOBS_BY_KIND if graph else JOBS_BY_KIND).get(kind, ())
    if recall:
        jobs += tuple(j for j in RECALL_JOBS_BY_KIND.get(kind, ()) if not (ahead and j is PREPARE_RECALL))
    if salience:
        jobs += SALIENCE_JOBS_BY_KIND.get(kind, ())
    return jobs
