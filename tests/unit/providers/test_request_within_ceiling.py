"""The request decorate assembles, counted again with tiktoken from what is sent, never passes the ceiling."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.errors import OverCeiling
from engine.config import MechanismConfig
from engine.messages import StoredMessage
from engine.planning import StoredMemory
from engine.units import number_turns
from providers.tokens import TiktokenCounter
from tests.unit.engine.conversations import T0, plan_call, request
from tests.unit.engine.test_properties import conversations

COUNTER = TiktokenCounter()


def _stored(items: list[dict[str, Any]], gaps: list[int]) -> list[StoredMessage]:
    turns, at, messages = number_turns(items), T0, []
    for seq, (item, gap) in enumerate(zip(items, gaps, strict=True), start=1):
        at += timedelta(minutes=gap)
        tokens = COUNTER.count_text(json.dumps(item, ensure_ascii=False), model="gpt-4o")
        messages.append(StoredMessage(seq, turns[seq - 1], at, item, tokens))
    return messages


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conversations(), st.integers(600, 4_000))
def test_every_decorated_request_counted_by_tiktoken_fits_the_ceiling(
    conversation: tuple[str, list[dict[str, Any]], list[int]], ceiling: int
) -> None:
    shape, items, gaps = conversation
    config = MechanismConfig(ceiling_tokens=ceiling, default_room_for_next_call=150, default_typical_turn=100,
                             episode_max_floor=60)
    episodes: tuple = ()
    starts = [i for i, item in enumerate(items) if item.get("role") == "user"] + [len(items)]
    for end in starts[1:]:
        messages = _stored(items[:end], gaps[:end])
        body = request(shape, items[:end], model="gpt-4o")
        try:
            result = plan_call(body, StoredMemory(messages, episodes=episodes), now=messages[-1].at, config=config,
                              count_text=lambda text: COUNTER.count_text(text, model="gpt-4o"))
        except OverCeiling:
            return  # refused: nothing is sent
        # Counted from the request as sent, by the provider-style count, not by the engine's own sums.
        assert COUNTER.count_request(result.request) <= result.budget.ceiling
        episodes = result.episodes
