"""Streamed replies: the agent's chunks without the note call, and the whole reply for report."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from engine.replies import without_note_calls
from engine.streams import ChatStreamFilter, ResponsesStreamFilter


def _chunks(text: str, calls: list[tuple[str, str, str]], *, split: int = 3) -> list[dict]:
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": text[i:i + split]}) for i in range(0, len(text), split)]
    for index, (call_id, name, arguments) in enumerate(calls):
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[i:i + split]}}]})
                for i in range(0, len(arguments), split)]
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    out.append({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
    return out


NOTE = ("call_note", "note", json.dumps({"notes": [{"note": "x", "subject": "s", "object": "o", "milestone": False}]}))
LOOKUP = ("call_lookup", "lookup", json.dumps({"query": "LTH-7"}))


def _read(sent: list[dict]) -> tuple[str, dict[int, list[str]], list[str]]:
    text, calls, finishes = "", {}, []
    for chunk in sent:
        for choice in chunk["choices"]:
            text += choice["delta"].get("content") or ""
            for call in choice["delta"].get("tool_calls") or []:
                whole = calls.setdefault(call["index"], ["", ""])
                whole[0] += (call.get("function") or {}).get("name") or ""
                whole[1] += (call.get("function") or {}).get("arguments") or ""
            if choice.get("finish_reason"):
                finishes.append(choice["finish_reason"])
    return text, calls, finishes


@given(text=st.text(min_size=1, max_size=40), note_first=st.booleans(), split=st.integers(1, 7))
def test_chat_stream_shows_what_report_hands_back(text: str, note_first: bool, split: int) -> None:
    calls = [NOTE, LOOKUP] if note_first else [LOOKUP, NOTE]
    stream = ChatStreamFilter(send_usage=False)
    sent = [out for chunk in _chunks(text, calls, split=split) for out in stream.feed(chunk)]
    shown_text, shown_calls, finishes = _read(sent)
    reply = stream.reply()
    agent = without_note_calls(reply)["choices"][0]["message"]
    assert shown_text == agent["content"] == text
    assert shown_calls == {0: ["lookup", LOOKUP[2]]}  # the note gone, the lookup renumbered to 0
    assert [c["function"]["name"] for c in reply["choices"][0]["message"]["tool_calls"]] == \
        [name for _, name, _ in calls]
    assert finishes == ["tool_calls"] and reply["usage"]["total_tokens"] == 12
    assert not any("usage" in chunk and not chunk["choices"] for chunk in sent)  # not asked for


def test_chat_note_only_reply_shows_nothing_and_says_stop_if_released() -> None:
    stream = ChatStreamFilter(send_usage=True)
    sent = [out for chunk in _chunks("", [NOTE]) for out in stream.feed(chunk)]
    assert sent == [] and not stream.visible
    released = stream.release()
    assert _read(released) == ("", {}, ["stop"])  # no call the agent cannot see
    assert stream.reply()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "note"


def _events(items: list[dict]) -> list[dict]:
    events = [{"type": "response.created", "sequence_number": 0, "response": {"output": [], "tools": [
        {"type": "function", "name": "note"}, {"type": "function", "name": "lookup"}]}}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "function_call":
            events.append({"type": "response.function_call_arguments.delta", "item_id": item["id"],
                           "output_index": index, "delta": item["arguments"]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": {"output": items, "usage": {"input_tokens": 5},
                                                              "tools": events[0]["response"]["tools"]}})
    return [{**e, "sequence_number": n} for n, e in enumerate(events)]


def test_responses_stream_drops_the_note_item_and_holds_the_terminal_event() -> None:
    note = {"id": "fc_1", "type": "function_call", "call_id": "n1", "name": "note", "arguments": NOTE[2]}
    message = {"id": "msg", "type": "message", "role": "assistant",
               "content": [{"type": "output_text", "text": "Hi"}]}
    stream = ResponsesStreamFilter()
    sent = [out for event in _events([note, message]) for out in stream.feed(event)]
    assert all("fc_1" not in json.dumps(e) for e in sent)
    assert [e["output_index"] for e in sent if "output_index" in e] == [0, 0]
    assert [e["type"] for e in sent][-1] == "response.output_item.done"  # completed waits for report
    assert [e["name"] for e in sent[0]["response"]["tools"]] == ["lookup"]
    final = stream.finish()
    assert final[0]["type"] == "response.completed" and final[0]["response"]["output"] == [message]
    assert [e["sequence_number"] for e in [*sent, *final]] == list(range(len(sent) + 1))
    assert stream.reply()["output"] == [note, message] and stream.reply()["usage"] == {"input_tokens": 5}


def test_responses_note_only_reply_shows_nothing() -> None:
    note = {"id": "fc_1", "type": "function_call", "call_id": "n1", "name": "note", "arguments": NOTE[2]}
    stream = ResponsesStreamFilter()
    assert [out for event in _events([note]) for out in stream.feed(event)] == []
    assert not stream.visible and not stream.failed
