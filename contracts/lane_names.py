"""The memory workflow's public names: its type, id, signal and search attributes.

The gateway starts and signals the workflow, the settings register its search attributes, and the workflow
itself upserts them: all three read the names here. Standard library only, so every layer may import it
without importing the workflow.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = [
    "ALL_ATTRIBUTES",
    "EVENTS_SIGNAL",
    "LANE_BACKLOG",
    "LAST_USER_MESSAGE_AT",
    "LEAVING_EPISODES",
    "MEMORY_ERASED",
    "RETRIABLE_JOBS",
    "RETRY_SIGNAL",
    "MEMORY",
    "NOTE_ASK_PENDING",
    "NOTE_ASK_SINCE",
    "TENANT",
    "WORKFLOW_TYPE",
    "SearchAttribute",
    "workflow_id",
]

WORKFLOW_TYPE = "MemoryWorkflow"
# Carries the newest outbox event number and the memory's row id; the workflow reads the events themselves from
# Postgres.
EVENTS_SIGNAL = "events"
# An operator asks the lane to run a parked job again: (seq, event kind, job's activity name).
RETRY_SIGNAL = "retry_parked"
# The jobs the lane runs for an event, which such a retry can name (workflows.jobs checks it has these).
RETRIABLE_JOBS = frozenset({"score_boundaries", "cut_history", "score_traces", "update_graph", "distill_recall",
                            "prepare_recall", "judge_salience"})
# The error type of a job whose memory was erased while it ran: final, and nothing to park.
MEMORY_ERASED = "MemoryErased"


def workflow_id(tenant_id: str, memory_id: str) -> str:
    return f"memory/{tenant_id}/{memory_id}"


class SearchAttribute(NamedTuple):
    name: str
    kind: Literal["keyword", "bool", "datetime", "int"]


TENANT = SearchAttribute("LetheTenant", "keyword")
MEMORY = SearchAttribute("LetheMemory", "keyword")
NOTE_ASK_PENDING = SearchAttribute("LetheNoteAskPending", "bool")
NOTE_ASK_SINCE = SearchAttribute("LetheNoteAskSince", "datetime")
LEAVING_EPISODES = SearchAttribute("LetheLeavingEpisodes", "int")
LANE_BACKLOG = SearchAttribute("LetheLaneBacklog", "int")
LAST_USER_MESSAGE_AT = SearchAttribute("LetheLastUserMessageAt", "datetime")

ALL_ATTRIBUTES = (TENANT, MEMORY, NOTE_ASK_PENDING, NOTE_ASK_SINCE, LEAVING_EPISODES, LANE_BACKLOG,
                  LAST_USER_MESSAGE_AT)
