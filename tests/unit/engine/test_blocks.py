from __future__ import annotations

import json
from datetime import timedelta

from engine.blocks import (
    NOTE_PARAMETERS,
    note_tool_chat,
    note_tool_responses,
    read_note_arguments,
    render_facts_block,
    render_note_ask,
)
from engine.facts import Fact
from tests.unit.engine.conversations import T0


def fact(fid: str, note: str, subject: str, obj: str, *, milestone: bool = False, minutes: int = 0) -> Fact:
    return Fact(
        id=fid,
        note=note,
        subject=subject,
        object=obj,
        milestone=milestone,
        episode_ids=("e1",),
        at=T0 + timedelta(minutes=minutes),
        first_turn=3,
        last_turn=5,
    )


def test_facts_block_most_active_first_milestones_apart_entities_in_brackets() -> None:
    facts = [
        fact("f1", "Launch is on 2026-03-14.", "pricing page", "launch date"),
        fact("f2", "Copy v3 awaits legal review.", "copy v3", "refund line"),
        fact("f3", "The user approved copy v3.", "user", "copy v3", milestone=True),
    ]
    text = render_facts_block(facts, {"f1": 0.1, "f2": 0.9, "f3": 0.5})
    assert text is not None
    lines = text.splitlines()
    assert lines[1] == "- Copy v3 awaits legal review. [copy v3, refund line]"
    assert lines[2] == "- Launch is on 2026-03-14. [pricing page, launch date]"
    assert lines[3].startswith("Milestones")
    assert lines[4] == "- The user approved copy v3. [user, copy v3]"
    assert "out of view" in lines[0]


def test_facts_block_none_without_facts() -> None:
    assert render_facts_block([], {}) is None


def test_note_ask_names_the_turns_and_what_a_good_fact_is() -> None:
    text = render_note_ask(12, 15)
    assert "turns 12–15" in text
    for words in (
        "exactly one call to the note tool",
        "knowledge-graph triple",
        "canonical name",
        "verbatim",
    ):
        assert words in text or words == "verbatim" and "character for character" in text
    assert "milestone" in text and "empty note" in text
    assert "turn 7" in render_note_ask(7, 7) and "that turn holds" in render_note_ask(7, 7)


def test_note_tool_shapes_share_the_design_schema() -> None:
    chat, responses = note_tool_chat(), note_tool_responses()
    assert chat["type"] == "function" and chat["function"]["name"] == "note"
    assert responses["type"] == "function" and responses["name"] == "note"
    assert chat["function"]["parameters"] == responses["parameters"] == NOTE_PARAMETERS
    item = NOTE_PARAMETERS["properties"]["notes"]["items"]
    assert item["properties"] == {
        "note": {"type": "string", "description": item["properties"]["note"]["description"]},
        "subject": {"type": "string", "description": item["properties"]["subject"]["description"]},
        "object": {"type": "string", "description": item["properties"]["object"]["description"]},
        "milestone": {"type": "boolean", "description": item["properties"]["milestone"]["description"]},
        "source": {"type": "string", "enum": ["user", "assistant", "tool"],
                   "description": item["properties"]["source"]["description"]},
        "kind": {"type": "string",
                 "enum": ["constraint", "decision", "correction", "dead_end", "open_question", "fact"],
                 "description": item["properties"]["kind"]["description"]},
        "settles": {"type": "string", "description": item["properties"]["settles"]["description"]},
    }
    assert "source" not in item["required"]  # optional: absent means unknown
    assert "kind" not in item["required"] and "settles" not in item["required"]  # absent: a plain fact
    chat["function"]["parameters"]["required"].append("x")
    assert NOTE_PARAMETERS["required"] == ["notes"]


def test_read_note_arguments_takes_facts() -> None:
    args = {
        "notes": [{"note": "Dana owns checkout.", "subject": "Dana", "object": "checkout", "milestone": True}]
    }
    reading = read_note_arguments(json.dumps(args))
    assert reading.taken and reading.entries[0].milestone and reading.entries[0].subject == "Dana"


def test_read_note_arguments_one_empty_entry_means_nothing_to_keep() -> None:
    reading = read_note_arguments({"notes": [{"note": "", "subject": "", "object": "", "milestone": False}]})
    assert reading.taken and reading.entries == ()


def test_read_note_arguments_rejects_malformed_calls_with_a_reason() -> None:
    bad = [
        "not json",
        "[]",
        {"notes": []},
        {"notes": ["x"]},
        {"notes": [{"note": "a", "subject": "b"}]},
        {"notes": [{"note": "a", "subject": "b", "object": "c", "milestone": "yes"}]},
        {"notes": [{"note": "a", "subject": "", "object": "c", "milestone": False}]},
        {"notes": [{"note": "", "subject": "", "object": "", "milestone": False}, {"note": "a"}]},
    ]
    for arguments in bad:
        reading = read_note_arguments(arguments)  # type: ignore[arg-type]
        assert not reading.taken and reading.error, arguments
