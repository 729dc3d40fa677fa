from __future__ import annotations

from engine.messages import history_items, instruction_items, item_kind, request_shape
from engine.units import closed_units, current_turn, number_turns, split_units, units_of
from tests.unit.engine.conversations import reply, step, stored, turn, user


def test_split_units_chat_keeps_call_with_outputs() -> None:
    items = [user("hi"), *step(["a", "b"]), reply("done")]
    assert split_units(items) == [(0, 1, "user"), (1, 4, "step"), (4, 5, "step")]


def test_split_units_responses_joins_reasoning_calls_and_outputs() -> None:
    items = [user("hi", "responses"), *step(["a", "b"], "responses"), reply("done", "responses")]
    assert split_units(items) == [(0, 1, "user"), (1, 6, "step"), (6, 7, "step")]


def test_split_units_responses_reasoning_stays_with_its_message() -> None:
    items = [
        user("hi", "responses"),
        {"type": "reasoning", "id": "rs", "summary": []},
        reply("x", "responses"),
    ]
    assert split_units(items) == [(0, 1, "user"), (1, 3, "step")]


def test_split_units_chat_consecutive_assistant_messages_are_separate_steps() -> None:
    items = [user("hi"), reply("one"), reply("two")]
    assert split_units(items) == [(0, 1, "user"), (1, 2, "step"), (2, 3, "step")]


def test_split_units_late_output_joins_its_call() -> None:
    items = [
        user("hi", "responses"),
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
        reply("thinking", "responses"),
        {"type": "function_call_output", "call_id": "b", "output": "2"},
    ]
    spans = split_units(items)
    assert spans[0] == (0, 1, "user")
    assert any(start <= 3 and 5 < end for start, end, _ in spans)


def test_split_units_never_merges_across_a_user_message() -> None:
    items = [*step(["a"])[:1], user("hi"), {"role": "tool", "tool_call_id": "a", "content": "late"}]
    assert [kind for _, _, kind in split_units(items)] == ["step", "user", "other"]


def test_number_turns_each_user_message_opens_a_turn() -> None:
    items = [reply("greeting"), user("a"), *step(["x"]), user("b"), reply("c")]
    assert number_turns(items) == [0, 1, 1, 1, 2, 2]
    assert number_turns([user("a")], first_turn=5) == [6]


def test_units_of_carries_seqs_turns_and_sizes() -> None:
    messages = stored([*turn(1, calls=[2]), *turn(2, closed=False)])
    units = units_of(messages)
    assert [(u.first_seq, u.last_seq, u.turn) for u in units] == [(1, 1, 1), (2, 4, 1), (5, 5, 1), (6, 6, 2)]
    assert units[1].tokens == sum(m.tokens for m in messages[1:4])
    assert current_turn(messages) == 2
    assert [u.turn for u in closed_units(units, 2)] == [1, 1, 1]


def test_item_kind_reads_both_shapes() -> None:
    assert item_kind({"role": "tool", "tool_call_id": "a"}) == "output"
    assert item_kind({"type": "function_call_output", "call_id": "a"}) == "output"
    assert item_kind({"type": "function_call", "call_id": "a"}) == "step"
    assert item_kind({"role": "developer", "content": "x"}) == "instruction"
    assert item_kind({"type": "message", "role": "user", "content": "x"}) == "user"


def test_instruction_items_are_the_opening_system_messages() -> None:
    request = {
        "messages": [{"role": "system", "content": "a"}, user("q"), {"role": "system", "content": "b"}]
    }
    assert request_shape(request) == "chat_completions"
    assert instruction_items(request) == [{"role": "system", "content": "a"}]
    assert len(history_items(request)) == 2
    assert history_items({"input": "hello"}) == [{"role": "user", "content": "hello"}]
