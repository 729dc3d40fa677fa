from __future__ import annotations

from engine.assembly import Block, assemble, blocks_role, repair_history
from engine.request_rules import problems
from tests.unit.engine.conversations import reply, request, step, turn, user


def test_assemble_chat_order_and_roles() -> None:
    history = [*turn(1, calls=[1]), user("question 2")]
    base = request(
        "chat_completions", history, temperature=0.2, tools=[{"type": "function", "function": {"name": "lookup"}}]
    )
    view = [*history[:-1], Block("RECALL"), history[-1]]
    out = assemble(base, history=view, facts_block="FACTS", note_ask="ASK")
    roles = [(m["role"], m.get("content")) for m in out["messages"]]
    assert roles[0] == ("system", "Be brief.")
    assert roles[1] == ("system", "FACTS")
    assert roles[-3:] == [("system", "RECALL"), ("user", "question 2"), ("system", "ASK")]
    assert out["temperature"] == 0.2 and out["model"] == "gpt-test"
    assert [t["function"]["name"] for t in out["tools"]] == ["lookup", "note"]
    assert problems(out) == []
    assert base["messages"][1] == history[0]  # the caller's request is untouched


def test_assemble_chat_developer_instructions_make_developer_blocks() -> None:
    base = {"model": "m", "messages": [{"role": "developer", "content": "Rules."}, user("q")]}
    assert blocks_role(base) == "developer"
    out = assemble(base, history=[user("q")], facts_block="FACTS")
    assert out["messages"][1] == {"role": "developer", "content": "FACTS"}
    assert "tools" not in out


def test_assemble_responses_always_developer_and_note_tool_added_without_tools() -> None:
    history = turn(1, "responses", calls=[2], closed=False)
    base = request("responses", history, store=False)
    out = assemble(base, history=history, facts_block="FACTS", note_ask="ASK")
    assert out["instructions"] == "Be brief." and out["store"] is False
    assert out["input"][0] == {"type": "message", "role": "developer", "content": "FACTS"}
    assert out["input"][-1] == {"type": "message", "role": "developer", "content": "ASK"}
    assert out["tools"] == [
        {
            "type": "function",
            "name": "note",
            "description": out["tools"][0]["description"],
            "parameters": out["tools"][0]["parameters"],
        }
    ]
    assert problems(out) == []


def test_assemble_does_not_add_note_twice() -> None:
    from engine.blocks import note_tool_chat

    base = request("chat_completions", [user("q")], tools=[note_tool_chat()])
    out = assemble(base, history=[user("q")], note_ask="ASK")
    assert len(out["tools"]) == 1


def test_repair_history_chat_drops_orphans() -> None:
    call, output = step(["a", "b"])[0], step(["a"])[1]
    items = [user("q"), {"role": "tool", "tool_call_id": "z", "content": "x"}, call, output, reply("r")]
    repaired = repair_history(items, "chat_completions")
    assert problems({"messages": repaired}) == []
    assert [c["id"] for c in repaired[1]["tool_calls"]] == ["a"]
    lonely = repair_history([user("q"), step(["c"])[0]], "chat_completions")
    assert lonely == [user("q")]


def test_repair_history_responses_drops_orphans() -> None:
    items = step(["a", "b"], "responses")
    broken = [user("q", "responses"), items[0], items[1], items[2], items[3], items[4], items[4]]
    repaired = repair_history([broken[0], *items[:3], items[4], items[4]], "responses")
    assert problems({"input": repaired}) == []
    assert [i.get("call_id") for i in repaired if i.get("type") == "function_call"] == ["b"]
    assert broken  # the input list is not changed in place
