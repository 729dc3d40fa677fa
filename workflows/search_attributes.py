"""Lethe's search attributes as the workflow upserts them: typed keys over the names in `contracts.lane_names`."""

from __future__ import annotations

from typing import Any

from temporalio.common import SearchAttributeKey

from contracts import lane_names as names

__all__ = ["ALL", "LANE_BACKLOG", "LAST_USER_MESSAGE_AT", "LEAVING_EPISODES", "MEMORY", "NOTE_ASK_PENDING",
           "NOTE_ASK_SINCE", "TENANT", "key"]


def key(attribute: names.SearchAttribute) -> SearchAttributeKey[Any]:
    return getattr(SearchAttributeKey, f"for_{attribute.kind}")(attribute.name)  # type: ignore[no-any-return]


TENANT = key(names.TENANT)
MEMORY = key(names.MEMORY)
NOTE_ASK_PENDING = key(names.NOTE_ASK_PENDING)
NOTE_ASK_SINCE = key(names.NOTE_ASK_SINCE)
LEAVING_EPISODES = key(names.LEAVING_EPISODES)
LANE_BACKLOG = key(names.LANE_BACKLOG)
LAST_USER_MESSAGE_AT = key(names.LAST_USER_MESSAGE_AT)

ALL = tuple(key(attribute) for attribute in names.ALL_ATTRIBUTES)
