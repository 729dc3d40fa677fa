"""What the integrations' tests share: questions long enough to fade at the small ceiling, a record of what
decorate handed back, and reading an export."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from lethe.client import AsyncLethe, DecorateResult, Lethe
from tests.support import eventually

FILLER = "The rollout keeps the pricing table, the refund line and the tax rates in step across regions. " * 12


def questions(turns: int) -> list[str]:
    """`turns` questions; the second asks for a lookup (the fake upstream calls `lookup` on "lookup")."""
    return [("Please lookup LTH-7 for me. " if turn == 1 else f"Turn {turn}. ") + FILLER for turn in range(turns)]


def record_decorates(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every request decorate hands back, from both clients, in order: observed, the gateway untouched."""
    seen: list[dict[str, Any]] = []
    sync_decorate, async_decorate = Lethe.decorate, AsyncLethe.decorate

    def decorate(self: Lethe, *args: Any, **kwargs: Any) -> DecorateResult:
        result = sync_decorate(self, *args, **kwargs)
        seen.append(result.request)
        return result

    async def adecorate(self: AsyncLethe, *args: Any, **kwargs: Any) -> DecorateResult:
        result = await async_decorate(self, *args, **kwargs)
        seen.append(result.request)
        return result

    monkeypatch.setattr(Lethe, "decorate", decorate)
    monkeypatch.setattr(AsyncLethe, "decorate", adecorate)
    return seen


def text_of(body: dict[str, Any]) -> str:
    content = body.get("content", body.get("output", ""))
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def is_note_ask(item: dict[str, Any]) -> bool:
    return item.get("role") in ("system", "developer") and "note" in text_of(item) and "History from" in text_of(item)


def is_facts_block(item: dict[str, Any]) -> bool:
    return item.get("role") in ("system", "developer") and text_of(item).startswith("Facts kept")


async def until_facts_block(lethe: AsyncLethe, memory_id: str, asked: list[str],
                            turn: Callable[[str], Awaitable[None]], *, most: int = 12) -> None:
    """More turns (their questions added to `asked`) until the memory shows a facts block, then one more, whose
    view opens with it. When the note is answered and its episodes sealed depends on the lane, not on a count
    of turns, so a fixed count of turns cannot promise the block."""

    async def shown() -> bool:
        return (await lethe.state(memory_id)).facts_block is not None

    for _ in range(most):
        try:
            await eventually(shown, timeout=5)
            break
        except AssertionError:
            asked.append(questions(len(asked) + 1)[-1])
            await turn(asked[-1])
    else:
        raise AssertionError(f"no facts block after {most} more turns")
    asked.append(questions(len(asked) + 1)[-1])
    await turn(asked[-1])


def check_turns(export: dict[str, Any], asked: list[str], answers: list[str]) -> None:
    """Every turn reached the memory, in order, once: the user messages are the questions, each turn's last
    assistant message is the answer the agent got, and no message the agent delivered is stored twice."""
    messages = export["messages"]
    assert [text_of(m["body"]) for m in messages if m["role"] == "user"] == asked
    turns = sorted({m["turn"] for m in messages})
    assert turns == list(range(1, len(asked) + 1))
    assert [m["seq"] for m in messages] == sorted(m["seq"] for m in messages)
    assert [m["turn"] for m in messages] == sorted(m["turn"] for m in messages)
    for turn, answer in zip(turns, answers, strict=True):
        said = [m for m in messages if m["turn"] == turn]
        replies = [text_of(m["body"]) for m in said if m["body"].get("role") == "assistant" and text_of(m["body"])]
        assert replies and replies[-1] == answer, (turn, replies, answer)
        # A model may say the same words in two replies (the fake does, after two tool outputs alike); what
        # the agent delivers (user messages, calls and their outputs, each with its own id) is stored once.
        bodies = [repr(sorted(m["body"].items())) for m in said
                  if not (m["body"].get("role") == "assistant" and m["body"].get("type", "message") == "message")]
        assert len(bodies) == len(set(bodies)), f"turn {turn} holds a message twice"
