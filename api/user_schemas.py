"""API shapes of users as the tenant manages them (api/routes/users.py) and of the per-source profile."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

__all__ = ["ProfilePublic", "UserErasedPublic", "UserFactsPublic", "UserListPublic", "UserPublic"]


class UserSummaryPublic(BaseModel):
    user_id: str
    created_at: str
    memories: int  # conversations bound to the user
    facts: int  # facts in force in the user's graph


class UserListPublic(BaseModel):
    users: list[UserSummaryPublic]
    next_cursor: str | None  # pass it as `cursor` for the next page; None on the last


class UserMemoryPublic(BaseModel):
    memory_id: str
    last_active_at: str | None


class UserPublic(BaseModel):
    user_id: str
    created_at: str
    memories: list[UserMemoryPublic]  # most recently active first
    facts_in_force: int
    profile: dict[str, bool]  # the tenant's per-source profile in force: which sources feed the graph


class UserFactsPublic(BaseModel):
    user_id: str
    # Every fact the graph ever held, oldest first, with `origin_memory_id`/`origin_fact_id`: where it came from.
    facts: list[dict[str, Any]]


class UserErasedPublic(BaseModel):
    user_id: str
    erased: bool
    memories: list[str]  # the conversations erased with the user (`memories=true`)
    workflows_ended: bool  # False while Temporal is away: the data is gone either way


class ProfilePublic(BaseModel):
    tenant_id: str
    # source (`user`, `assistant`, `tool`, `unknown`, `api`, `extracted`, `agent:<name>`) -> feeds the graph.
    profile: dict[str, bool]
