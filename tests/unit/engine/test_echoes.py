"""A note entry repeating the facts block or a recall block, and not the turns it was asked about, is an echo."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.echoes import conversation_text, echoed

BLOCK = "Facts kept from earlier turns:\n- The launch moved to Thursday.\n- Dana owns the launch checklist."


def test_a_fact_of_the_block_restated_word_for_word_is_an_echo() -> None:
    turns = "user: Can you draft the QA rota for next week?\nassistant: Here is a draft rota."
    assert echoed("The launch moved to Thursday.", [BLOCK], turns)
    assert echoed("  the launch moved to   thursday ", [BLOCK], turns)  # case, spacing, the full stop


def test_the_same_words_said_again_in_the_noted_turns_are_evidence() -> None:
    turns = "user: Reminder, the launch moved to Thursday, tell the team.\nassistant: Will do."
    assert not echoed("The launch moved to Thursday.", [BLOCK], turns)


def test_a_note_not_in_any_block_is_never_an_echo() -> None:
    assert not echoed("The QA rota starts on Monday.", [BLOCK], "user: nothing about it")
    assert not echoed("The launch moved to Friday.", [BLOCK], "")  # a change, not a repeat


@given(st.text(max_size=80), st.text(max_size=200))
def test_without_blocks_nothing_is_an_echo(note: str, turns: str) -> None:
    assert not echoed(note, [], turns)


@given(st.text(min_size=1, max_size=80).filter(lambda t: any(c.isalnum() for c in t)))
def test_what_the_turns_say_verbatim_is_never_an_echo(note: str) -> None:
    assert not echoed(note, [note], f"user: {note}")


def test_the_conversation_leaves_out_the_models_notes_and_their_answers() -> None:
    note = {"id": "call_n", "type": "function", "function": {"name": "note", "arguments": '{"notes": ['
                                                              '{"note": "The launch moved to Thursday."}]}'}}
    lookup = {"id": "call_l", "type": "function", "function": {"name": "lookup", "arguments": '{"q": "rota"}'}}
    bodies = [
        {"role": "user", "content": "Draft the QA rota."},
        {"role": "assistant", "content": "Drafting.", "tool_calls": [note, lookup]},
        {"role": "tool", "tool_call_id": "call_n", "content": "Recorded 1 fact."},
        {"role": "tool", "tool_call_id": "call_l", "content": "rota: Monday"},
        {"type": "function_call", "call_id": "fc_n", "name": "note", "arguments": '{"notes": []}'},
        {"type": "function_call_output", "call_id": "fc_n", "output": "Recorded nothing."},
    ]
    text = conversation_text(bodies)
    assert "QA rota" in text and "Drafting." in text and "rota: Monday" in text and "lookup" in text
    assert "Thursday" not in text and "Recorded" not in text
    assert echoed("The launch moved to Thursday.", [BLOCK], text)
