from __future__ import annotations

from engine.request_rules import problems
from tests.unit.engine.conversations import reply, request, step, turn, user


def test_problems_none_for_valid_requests_in_both_shapes() -> None:
    for shape in ("chat_completions", "responses"):
        assert problems(request(shape, [*turn(1, shape, calls=[2, 1]), *turn(2, shape, closed=False)])) == []


def test_problems_chat_call_without_output() -> None:
    messages = [user("q"), step(["a", "b"])[0], step(["a"])[1], reply("x")]
    found = problems({"messages": messages})
    assert any("'b'" in p for p in found)


def test_problems_chat_output_without_call() -> None:
    found = problems({"messages": [user("q"), {"role": "tool", "tool_call_id": "z", "content": "1"}]})
    assert found and "'z'" in found[0]


def test_problems_chat_other_message_between_call_and_output() -> None:
    call, output = step(["a"])
    assert problems({"messages": [user("q"), call, user("interrupt"), output]})


def test_problems_chat_duplicate_answer_and_unknown_role() -> None:
    call, output = step(["a"])
    assert problems({"messages": [user("q"), call, output, output]})
    assert problems({"messages": [{"role": "wizard", "content": "x"}]})
    assert problems({"messages": []})


def test_problems_responses_output_needs_an_earlier_call() -> None:
    items = step(["a"], "responses")
    assert problems({"input": [user("q", "responses"), items[2], items[1]]})
    assert problems({"input": [user("q", "responses"), items[1]]})
    assert problems({"input": [user("q", "responses"), *items, items[2]]})
    assert problems({"input": "just text"}) == []


def test_problems_tool_names_unique() -> None:
    tool = {"type": "function", "function": {"name": "note", "parameters": {}}}
    assert problems({"messages": [user("q")], "tools": [tool, tool]})
    assert (
        problems({"input": [user("q")], "tools": [{"type": "function", "name": "x"}, {"type": "web_search"}]})
        == []
    )


def test_problems_unknown_shape() -> None:
    assert problems({"prompt": "x"})
