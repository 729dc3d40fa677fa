"""The texts Lethe adds to a request: the facts block, the note ask and the note tool."""

from __future__ import annotations

from engine.blocks.facts_block import render_facts_block
from engine.blocks.note_ask import (
    NOTE_PARAMETERS,
    NOTE_TOOL_NAME,
    NoteEntry,
    NoteReading,
    note_tool_chat,
    note_tool_responses,
    read_note_arguments,
    render_note_ask,
)

__all__ = [
    "NOTE_PARAMETERS",
    "NOTE_TOOL_NAME",
    "NoteEntry",
    "NoteReading",
    "note_tool_chat",
    "note_tool_responses",
    "read_note_arguments",
    "render_facts_block",
    "render_note_ask",
]
