"""The per-source profile: defaults let in what the user said, a tenant's rows override, an agent row decides
for its agent's facts, and a source nobody named is muted."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.users import DEFAULT_PROFILE, feeds, profile_in_force

SOURCE = st.sampled_from(["user", "assistant", "tool", "unknown", "api", "extracted", "robot"])


def test_by_default_only_the_users_word_feeds_the_graph() -> None:
    profile = profile_in_force({})
    assert [s for s in ("user", "api", "assistant", "tool", "unknown", "extracted") if feeds(profile, s)] == [
        "user", "api"]
    assert not feeds(profile, "a source nobody named")


@given(SOURCE, st.booleans(), st.dictionaries(SOURCE, st.booleans()))
def test_a_tenants_row_decides_its_source(source: str, value: bool, others: dict[str, bool]) -> None:
    profile = profile_in_force({**others, source: value})
    assert feeds(profile, source) is value
    assert all(feeds(profile, s) is DEFAULT_PROFILE[s] for s in DEFAULT_PROFILE if s not in {*others, source})


@given(SOURCE, st.booleans())
def test_an_agent_row_decides_for_that_agents_facts_only(source: str, value: bool) -> None:
    profile = profile_in_force({"agent:planner": value})
    assert feeds(profile, source, "planner") is value
    assert feeds(profile, source, "other") is profile.get(source, False)
