"""Passages quote the conversation, not the note calls: a note restates leaving turns in the model's words, and
a value the graph has since retired would come back through it as if it were still the record."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engine.messages import StoredMessage
from engine.passages import cut_passages

_AT = datetime(2026, 1, 1, tzinfo=UTC)
NOTE_ARGS = '{"notes": [{"note": "The region is eu-west-1.", "subject": "region", "object": "eu-west-1"}]}'


def _messages(*bodies: dict[str, Any]) -> list[StoredMessage]:
    return [StoredMessage(seq=i + 1, turn=1, at=_AT, body=b, tokens=1) for i, b in enumerate(bodies)]


CHAT = _messages(
    {"role": "user", "content": "Which region hosts Orion? Also check the deploy log."},
    {"role": "assistant", "content": "Checking.", "tool_calls": [
        {"id": "n1", "type": "function", "function": {"name": "note", "arguments": NOTE_ARGS}},
        {"id": "l1", "type": "function", "function": {"name": "read_log", "arguments": "{}"}}]},
    {"role": "tool", "tool_call_id": "n1", "content": "Recorded 1 fact."},
    {"role": "tool", "tool_call_id": "l1", "content": "deploy ok at 10:02"},
)
RESPONSES = _messages(
    {"role": "user", "content": "Which region hosts Orion? Also check the deploy log."},
    {"type": "function_call", "name": "note", "call_id": "n1", "arguments": NOTE_ARGS},
    {"type": "function_call_output", "call_id": "n1", "output": "Recorded 1 fact."},
    {"type": "function_call", "name": "read_log", "call_id": "l1", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "l1", "output": "deploy ok at 10:02"},
)
MESSAGES = _messages(
    {"role": "user", "content": "Which region hosts Orion? Also check the deploy log."},
    {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                      {"type": "tool_use", "id": "n1", "name": "note", "input": {"notes": []}},
                                      {"type": "tool_use", "id": "l1", "name": "read_log", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "n1", "content": "Recorded 1 fact."},
                                 {"type": "tool_result", "tool_use_id": "l1", "content": "deploy ok at 10:02"}]},
)


@pytest.mark.parametrize("messages", [CHAT, RESPONSES, MESSAGES], ids=["chat", "responses", "messages"])
def test_a_passage_keeps_the_talk_and_other_tools_but_not_the_note(messages: list[StoredMessage]) -> None:
    text = "\n".join(p.text for p in cut_passages(messages))
    assert "Which region hosts Orion?" in text and "read_log" in text and "deploy ok at 10:02" in text
    assert "eu-west-1" not in text and "Recorded 1 fact." not in text and "note(" not in text


def test_a_conversation_without_notes_is_cut_as_before() -> None:
    plain = _messages({"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"})
    (passage,) = cut_passages(plain)
    assert passage.text == "user: hello\nassistant: hi" and (passage.first_seq, passage.last_seq) == (1, 2)
