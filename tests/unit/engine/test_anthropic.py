"""The Anthropic Messages shape in the engine: recognising it, placing Lethe's blocks in `system`, keeping
history valid, the note tool, the note call in a reply and in a stream."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.anthropic import looks_like_messages, note_tool_messages, repair_messages
from engine.anthropic_stream import MessagesStreamFilter
from engine.assembly import Block, assemble
from engine.blocks.note_ask import note_tool_chat
from engine.messages import MessagesRequest, answered_call_ids, call_ids, history_items, instruction_items, item_kind
from engine.replies import answer_places, note_calls, read_note, without_note_calls
from engine.request_rules import problems
from engine.units import split_units

SYSTEM = [{"type": "text", "text": "You help with tickets.", "cache_control": {"type": "ephemeral"}}]
USER = {"role": "user", "content": "Look up LTH-7."}
CALL = {"role": "assistant", "content": [
    {"type": "thinking", "thinking": "A lookup.", "signature": "sig"},
    {"type": "tool_use", "id": "toolu_1", "name": "lookup", "input": {"query": "LTH-7"}}]}
RESULT = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "open"}]}
NOTE = {"notes": [{"note": "LTH-7 is open.", "subject": "LTH-7", "object": "open", "milestone": False}]}


def _request(messages: list[dict[str, Any]], **fields: Any) -> MessagesRequest:
    return MessagesRequest({"model": "claude-test", "max_tokens": 256, "system": SYSTEM, "messages": messages,
                            "tools": [{"name": "lookup", "input_schema": {"type": "object"}}], **fields})


def test_the_note_tool_is_the_one_definition_in_anthropic_form() -> None:
    function = note_tool_chat()["function"]
    assert note_tool_messages() == {"name": function["name"], "description": function["description"],
                                    "input_schema": function["parameters"]}


def test_messages_requests_are_told_by_what_only_anthropic_has() -> None:
    assert looks_like_messages({"model": "m", "system": "Be brief.", "messages": [USER]})
    assert looks_like_messages({"model": "m", "messages": [USER, CALL, RESULT]})
    assert looks_like_messages({"model": "m", "messages": [USER], "tools": [{"name": "x", "input_schema": {}}]})
    assert looks_like_messages({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}]})
    assert not looks_like_messages({"model": "m", "messages": [{"role": "system", "content": "x"}, USER]})
    # Anything only Chat Completions has wins: a system message, a tool message, an OpenAI content part.
    assert not looks_like_messages({"model": "m", "system": "x", "messages": [{"role": "tool", "content": "x"}]})
    assert not looks_like_messages({"model": "m", "top_k": 5, "thinking": {"type": "enabled"}, "messages": [USER]})
    assert looks_like_messages({"model": "m", "thinking": {"type": "enabled", "budget_tokens": 1024},
                                "messages": [USER]})
    assert not looks_like_messages({"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "https://x"}}]}]})


def test_tool_results_are_outputs_that_open_no_turn() -> None:
    assert item_kind(RESULT) == "output" and item_kind(USER) == "user" and item_kind(CALL) == "step"
    assert call_ids(CALL) == ("toolu_1",)
    both = {"role": "user", "content": [*RESULT["content"],
                                        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "x"}]}
    assert answered_call_ids(both) == ("toolu_1", "toolu_2")
    assert split_units([USER, CALL, RESULT, {"role": "assistant", "content": "Open."}]) == [
        (0, 1, "user"), (1, 3, "step"), (3, 4, "step")]
    request = _request([USER, CALL, RESULT])
    assert instruction_items(request) == [] and history_items(request) == [USER, CALL, RESULT]


def test_lethe_blocks_follow_the_agents_system_and_the_note_tool_its_tools() -> None:
    request = _request([USER, CALL, RESULT])
    out = assemble(request, history=[USER, Block("RECALL"), CALL, RESULT], facts_block="FACTS", note_ask="ASK")
    assert out["system"] == [*SYSTEM, *({"type": "text", "text": t} for t in ("FACTS", "RECALL", "ASK"))]
    assert out["messages"] == [USER, CALL, RESULT]
    assert [t["name"] for t in out["tools"]] == ["lookup", "note"]
    assert out["tools"][1] == note_tool_messages()
    assert problems(out) == []
    assert request["system"] == SYSTEM and len(request["tools"]) == 1  # the caller's request is untouched
    # A string system becomes the first block; nothing of Lethe's, nothing changed.
    text = assemble(_request([USER], system="Be brief."), history=[USER], facts_block="FACTS")
    assert text["system"] == [{"type": "text", "text": "Be brief."}, {"type": "text", "text": "FACTS"}]
    plain = assemble(_request([USER], system="Be brief."), history=[USER])
    assert plain["system"] == "Be brief." and "note" not in json.dumps(plain["tools"])


def test_repair_keeps_calls_answered_in_the_next_message_only() -> None:
    lost_call = {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
                                                  {"type": "tool_use", "id": "toolu_9", "name": "lookup",
                                                   "input": {}}]}
    # The orphan result joins the user message before it (Anthropic would join them) and is dropped there.
    repaired = repair_messages([USER, lost_call, {"role": "user", "content": "Never mind."}, RESULT])
    assert repaired == [USER, {"role": "assistant", "content": [{"type": "text", "text": "Checking."}]},
                        {"role": "user", "content": [{"type": "text", "text": "Never mind."}]}]
    assert problems(MessagesRequest({"messages": repaired})) == []
    # Lethe's answer to a note call stands between the call and the agent's own results: joined, results first.
    noted = {"role": "assistant", "content": [*CALL["content"], {"type": "tool_use", "id": "toolu_n",
                                                                   "name": "note", "input": NOTE}]}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_n", "content": "ok"}]}
    agent = {"role": "user", "content": [*RESULT["content"], {"type": "text", "text": "Go on."}]}
    joined = repair_messages([USER, noted, answer, agent])
    assert joined[2]["content"] == [answer["content"][0], RESULT["content"][0], {"type": "text", "text": "Go on."}]
    assert problems(MessagesRequest({"messages": joined})) == []


def _reply(*blocks: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": list(blocks),
            "stop_reason": stop, "usage": {"input_tokens": 10, "output_tokens": 3}}


def test_the_note_call_is_read_and_hidden_from_a_reply() -> None:
    note = {"type": "tool_use", "id": "toolu_n", "name": "note", "input": NOTE}
    reply = _reply({"type": "text", "text": "Open."}, note)
    assert [c.call_id for c in note_calls(reply)] == ["toolu_n"]
    reading = read_note(reply)
    assert reading is not None and reading.taken and reading.entries[0].note == "LTH-7 is open."
    shown = without_note_calls(reply)
    assert shown["content"] == [{"type": "text", "text": "Open."}] and shown["stop_reason"] == "end_turn"
    assert reply["content"][1] == note  # the reply itself is untouched
    lookup = {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {}}
    assert without_note_calls(_reply(note, lookup))["stop_reason"] == "tool_use"
    # Its answer goes right after the call's message, before the agent's own results.
    assert answer_places([USER, {"role": "assistant", "content": [note, lookup]},
                          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2"}]}],
                         ["toolu_n"]) == {"toolu_n": 1}


def _events(blocks: list[dict[str, Any]], stop: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                              "model": "claude-test", "content": [], "stop_reason": None,
                                              "usage": {"input_tokens": 10, "cache_read_input_tokens": 4}}},
        {"type": "ping"}]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            events.append({"type": "content_block_start", "index": index, "content_block": {"type": "text",
                                                                                             "text": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "text_delta", "text": block["text"]}})
        elif block["type"] == "thinking":
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "thinking_delta", "thinking": block["thinking"]}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "signature_delta", "signature": block["signature"]}})
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            events.append({"type": "content_block_delta", "index": index,
                           "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}})
        events.append({"type": "content_block_stop", "index": index})
    events += [{"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 7}}, {"type": "message_stop"}]
    return events


def test_a_stream_hides_the_note_block_and_renumbers_the_rest() -> None:
    thinking = {"type": "thinking", "thinking": "Hmm.", "signature": "sig"}
    note = {"type": "tool_use", "id": "toolu_n", "name": "note", "input": NOTE}
    lookup = {"type": "tool_use", "id": "toolu_2", "name": "lookup", "input": {"query": "LTH-7"}}
    blocks: list[dict[str, Any]] = [thinking, {"type": "text", "text": "Checking."}, note, lookup]
    stream = MessagesStreamFilter()
    sent = [out for event in _events(blocks, "tool_use") for out in stream.feed(event)]
    sent += stream.release() + stream.finish()
    assert not any("note" in json.dumps(event) for event in sent)
    assert [e["index"] for e in sent if e["type"] == "content_block_start"] == [0, 1, 2]
    assert sent[0]["type"] == "message_start" and sent[-1] == {"type": "message_stop"}
    assert stream.reply()["content"] == blocks  # the whole reply for report, note call included
    assert stream.reply()["usage"] == {"input_tokens": 10, "cache_read_input_tokens": 4, "output_tokens": 7}


def test_a_stream_that_was_only_thinking_and_the_note_shows_nothing() -> None:
    stream = MessagesStreamFilter()
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": "Hmm.", "signature": "sig"},
              {"type": "tool_use", "id": "toolu_n", "name": "note", "input": NOTE}]
    assert [out for event in _events(blocks, "tool_use") for out in stream.feed(event)] == []
    assert not stream.visible and stream.complete
    assert [c.call_id for c in note_calls(stream.reply())] == ["toolu_n"]
    # Shown as it is (nothing to continue): no call the agent can see, so no `tool_use` stop.
    released = stream.release()
    assert [e for e in released if e["type"] == "message_delta"][0]["delta"]["stop_reason"] == "end_turn"


_text = st.text(alphabet="abc XYZ.", min_size=1, max_size=12)


@st.composite
def _conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Valid Anthropic histories: user turns (text, images), assistant steps (text, thinking, tool calls)
    each answered in the next user message."""
    messages: list[dict[str, Any]] = []
    calls = 0
    for _ in range(draw(st.integers(1, 6))):
        content: Any = draw(_text) if draw(st.booleans()) else [
            {"type": "text", "text": draw(_text)},
            *([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]
              if draw(st.booleans()) else [])]
        messages.append({"role": "user", "content": content})
        for _ in range(draw(st.integers(0, 2))):
            uses = [{"type": "tool_use", "id": f"toolu_{calls + i}", "name": "lookup", "input": {"q": draw(_text)}}
                    for i in range(draw(st.integers(1, 2)))]
            calls += len(uses)
            thinking = [{"type": "thinking", "thinking": draw(_text), "signature": draw(_text)}] \
                if draw(st.booleans()) else [{"type": "redacted_thinking", "data": draw(_text)}] \
                if draw(st.booleans()) else []
            messages.append({"role": "assistant", "content": [*thinking, *uses]})
            messages.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": use["id"], "content": draw(_text)} for use in uses]})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": draw(_text)}]})
    return messages[:-1] if draw(st.booleans()) else messages


@settings(max_examples=150, deadline=None)
@given(_conversations(), st.lists(_text, max_size=3), st.one_of(st.none(), _text),
       st.sampled_from(["string", "blocks", "none"]))
def test_assembly_keeps_the_agents_blocks_untouched(messages: list[dict[str, Any]], recalls: list[str],
                                                    ask: str | None, system_kind: str) -> None:
    system: Any = {"string": "Be brief.", "blocks": SYSTEM, "none": None}[system_kind]
    request = _request(messages) if system is not None else MessagesRequest(
        {k: v for k, v in _request(messages).items() if k != "system"})
    if system is not None:
        request["system"] = system
    kept = copy.deepcopy(dict(request))
    history = history_items(request)
    view: list[Any] = [*([Block(r) for r in recalls]), *history]
    out = assemble(request, history=view, facts_block="FACTS", note_ask=ask)
    # The history goes out exactly as the agent sent it, every block (thinking, images, signatures) unchanged.
    assert out["messages"] == messages
    assert dict(request) == kept
    # The agent's system comes first and unchanged; Lethe's texts follow, each its own text block.
    own = [] if system is None else [{"type": "text", "text": system}] if isinstance(system, str) else system
    assert out["system"][:len(own)] == own
    assert [b["text"] for b in out["system"][len(own):]] == ["FACTS", *recalls, *([ask] if ask else [])]
    assert problems(out) == []
    # Assembling what was sent again changes nothing of the agent's part.
    again = assemble(MessagesRequest(out), history=history_items(MessagesRequest(out)))
    assert again["messages"] == messages
