"""Which facts of a user's conversations feed the user's graph: the per-source profile (seed 004's idea).

A fact's source says whose word it rests on. By default what the user said (or confirmed, `api`: the user
managing their memory) feeds the graph; the model's own inferences, tool output, facts of unknown source and a
model's extraction (`extracted`, when it could not tell whose word it was) do not. A tenant's profile overrides
any of these, and names an agent (`agent:<name>`) to let that agent's facts in or keep them out whatever their
source. A source in neither is muted.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DEFAULT_PROFILE", "SOURCES", "feeds", "profile_in_force"]

SOURCES = ("user", "assistant", "tool", "unknown", "api", "extracted")
DEFAULT_PROFILE: Mapping[str, bool] = {"user": True, "api": True, "assistant": False, "tool": False,
                                       "unknown": False, "extracted": False}


def profile_in_force(tenant_rows: Mapping[str, bool]) -> dict[str, bool]:
    """The defaults with the tenant's own rows over them."""
    return {**DEFAULT_PROFILE, **tenant_rows}


def feeds(profile: Mapping[str, bool], source: str, agent: str | None = None) -> bool:
    """Whether a fact of `source`, noted in a conversation run by `agent`, reaches the user's graph."""
    if agent is not None and f"agent:{agent}" in profile:
        return profile[f"agent:{agent}"]
    return profile.get(source, False)
