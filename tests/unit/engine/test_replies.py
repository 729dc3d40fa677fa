from __future__ import annotations

import json

from engine.replies import answer_places, note_calls, read_note, without_note_calls

NOTES = json.dumps(
    {"notes": [{"note": "Dana owns checkout.", "subject": "Dana", "object": "checkout", "milestone": False}]}
)


def chat_reply(*names: str, finish: str = "tool_calls") -> dict:
    calls = [
        {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": n, "arguments": NOTES if n == "note" else "{}"},
        }
        for i, n in enumerate(names)
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {"id": "r", "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def test_note_calls_found_in_both_shapes() -> None:
    assert [c.call_id for c in note_calls(chat_reply("lookup", "note"))] == ["c1"]
    responses = {
        "output": [
            {"type": "function_call", "call_id": "n1", "name": "note", "arguments": NOTES},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
        ]
    }
    assert note_calls(responses)[0].arguments == NOTES
    reading = read_note(responses)
    assert reading is not None and reading.entries[0].subject == "Dana"
    assert without_note_calls(responses)["output"] == responses["output"][1:]


def test_without_note_calls_chat_keeps_other_calls() -> None:
    stripped = without_note_calls(chat_reply("lookup", "note"))
    assert [c["function"]["name"] for c in stripped["choices"][0]["message"]["tool_calls"]] == ["lookup"]
    assert stripped["choices"][0]["finish_reason"] == "tool_calls"


def test_without_note_calls_chat_only_note_becomes_a_plain_stop() -> None:
    original = chat_reply("note")
    stripped = without_note_calls(original)
    choice = stripped["choices"][0]
    assert "tool_calls" not in choice["message"] and choice["message"]["content"] == ""
    assert choice["finish_reason"] == "stop"
    assert original["choices"][0]["message"]["tool_calls"]  # the input is untouched


def test_read_note_none_without_a_note_call_and_rejects_malformed() -> None:
    assert read_note(chat_reply("lookup")) is None
    bad = chat_reply("note")
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{oops"
    reading = read_note(bad)
    assert reading is not None and not reading.taken


def test_an_unanswered_note_call_in_history_is_answered_after_its_calls_outputs() -> None:
    message = chat_reply("note", "lookup")["choices"][0]["message"]
    lookup = {"role": "tool", "tool_call_id": "c1", "content": "found"}
    history = [{"role": "user", "content": "hi"}, message, lookup, {"role": "user", "content": "next"}]
    assert answer_places(history, ["c0"]) == {"c0": 2}  # after the lookup's output, before the next message
    answered = [*history[:3], {"role": "tool", "tool_call_id": "c0", "content": "no such tool"}]
    assert answer_places(answered, ["c0"]) == {}  # the agent's own answer stands
    responses = [{"type": "function_call", "call_id": "n1", "name": "note", "arguments": NOTES},
                 {"type": "message", "role": "user", "content": "next"}]
    assert answer_places(responses, ["n1"]) == {"n1": 0}
    assert answer_places(responses, []) == {}  # a call already taken is not answered again
