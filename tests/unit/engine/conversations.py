"""Builders of conversations in both request shapes, for the engine's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.episodes import Episode, EpisodeState
from engine.messages import Shape, StoredMessage
from engine.planning import DecoratePlan, StoredMemory, decide, finish
from engine.recall.grouping import Recalled
from engine.sizing import estimate_tokens
from engine.units import number_turns

T0 = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)


def user(text: str, shape: Shape = "chat_completions") -> dict[str, Any]:
    if shape == "chat_completions":
        return {"role": "user", "content": text}
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def reply(text: str, shape: Shape = "chat_completions") -> dict[str, Any]:
    if shape == "chat_completions":
        return {"role": "assistant", "content": text}
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


def step(call_ids: Sequence[str], shape: Shape = "chat_completions", output: str = "ok") -> list[dict[str, Any]]:
    """An assistant step making these calls, followed by their outputs."""
    if shape == "chat_completions":
        calls = [
            {"id": c, "type": "function", "function": {"name": "lookup", "arguments": '{"q": "x"}'}}
            for c in call_ids
        ]
        return [
            {"role": "assistant", "content": None, "tool_calls": calls},
            *({"role": "tool", "tool_call_id": c, "content": f"{output} {c}"} for c in call_ids),
        ]
    return [
        {"type": "reasoning", "id": f"rs_{call_ids[0]}", "summary": []},
        *(
            {"type": "function_call", "call_id": c, "name": "lookup", "arguments": '{"q": "x"}'}
            for c in call_ids
        ),
        *({"type": "function_call_output", "call_id": c, "output": f"{output} {c}"} for c in call_ids),
    ]


def turn(
    index: int, shape: Shape = "chat_completions", *, calls: Sequence[int] = (), text: str = "", closed: bool = True
) -> list[dict[str, Any]]:
    """One turn: a user message, steps making `calls[i]` calls each, and a final reply when closed."""
    items = [user(f"question {index} {text}", shape)]
    for number, count in enumerate(calls):
        if count:
            items += step([f"call_{index}_{number}_{k}" for k in range(count)], shape, output=text or "ok")
    if closed:
        items.append(reply(f"answer {index} {text}", shape))
    return items


def stored(
    items: Sequence[dict[str, Any]], *, start: datetime = T0, gap: timedelta = timedelta(minutes=1)
) -> list[StoredMessage]:
    """Items as the store would hand them over: numbered from 1, with turns, times and sizes."""
    turns = number_turns(items)
    return [
        StoredMessage(seq=i + 1, turn=turns[i], at=start + gap * i, body=item, tokens=estimate_tokens(item))
        for i, item in enumerate(items)
    ]


def request(shape: Shape, history: Sequence[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    """A request as an agent sends it: instructions first, then the whole history."""
    if shape == "chat_completions":
        return {
            "model": "gpt-test",
            "messages": [{"role": "system", "content": "Be brief."}, *history],
            **fields,
        }
    return {"model": "gpt-test", "instructions": "Be brief.", "input": list(history), **fields}


def episode(state: EpisodeState = EpisodeState.LIVE, **fields: Any) -> Episode:
    """An episode with plain defaults; any field can be overridden."""
    base: dict[str, Any] = {
        "id": "e1",
        "first_seq": 1,
        "last_seq": 4,
        "first_turn": 1,
        "last_turn": 2,
        "tokens": 100,
        "at": T0,
    }
    base.update(fields)
    return Episode(state=state, **base)


def plan_call(request: Mapping[str, Any], memory: StoredMemory, *, recall: Sequence[Recalled] | None = None,
              **options: Any) -> DecoratePlan:
    """One call planned as the hot path plans it: `decide`, then `finish` with what recall found (None: recall
    was not asked)."""
    return finish(decide(request, memory, recall_coming=recall is not None, **options), recall)
