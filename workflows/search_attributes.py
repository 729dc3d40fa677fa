"""Lethe's search attributes, declared once: what operators filter memories by in the Temporal UI."""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

__all__ = ["ALL", "LEAVING_EPISODES", "LANE_BACKLOG", "LAST_USER_MESSAGE_AT", "MEMORY",
           "NOTE_ASK_PENDING", "NOTE_ASK_SINCE", "TENANT"]

TENANT = SearchAttributeKey.for_keyword("LetheTenant")
MEMORY = SearchAttributeKey.for_keyword("LetheMemory")
NOTE_ASK_PENDING = SearchAttributeKey.for_bool("LetheNoteAskPending")
NOTE_ASK_SINCE = SearchAttributeKey.for_datetime("LetheNoteAskSince")
LEAVING_EPISODES = SearchAttributeKey.for_int("LetheLeavingEpisodes")
LANE_BACKLOG = SearchAttributeKey.for_int("LetheLaneBacklog")
LAST_USER_MESSAGE_AT = SearchAttributeKey.for_datetime("LetheLastUserMessageAt")

ALL = (TENANT, MEMORY, NOTE_ASK_PENDING, NOTE_ASK_SINCE, LEAVING_EPISODES, LANE_BACKLOG, LAST_USER_MESSAGE_AT)
