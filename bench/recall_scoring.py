"""Is the answer in front of the model? The checks every approach in the recall bench is scored by.

A fact is in front when one sentence of the request (any message but the question itself: instructions, facts
block, recall block, history, tool calls' arguments, search results) holds all its key words. The recall block
is the text from a line that is exactly RECALL_HEAD to a line that is exactly RECALL_END.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from typing import Any

from recall_conversation import Conversation, Fact, Question

__all__ = ["RECALL_END", "RECALL_HEAD", "Tally", "current_recall_block", "find_recall_block", "request_texts",
           "sentences", "shows"]

RECALL_HEAD = "[recalled from earlier in this conversation]"
RECALL_END = "[end of recalled records]"
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n")


def request_texts(messages: Sequence[Any]) -> list[str]:
    """Every string in the request's messages but the last user message (the question as asked)."""
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"),
                    default=-1)
    out: list[str] = []
    for index, message in enumerate(messages):
        if index != last_user:
            _strings(message, out)
    return out


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in {"role", "type", "id", "tool_call_id", "name"}:
                _strings(item, out)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)


def sentences(texts: Iterable[str]) -> list[str]:
    return [s.lower() for text in texts for s in _SPLIT.split(text) if s.strip()]


def shows(said: Sequence[str], fact: Fact) -> bool:
    keys = [k.lower() for k in fact.keys]
    return any(all(k in s for k in keys) for s in said)


def current_recall_block(messages: Sequence[Any]) -> str | None:
    """This turn's recall block: in the instructions just before the last user message. Blocks of earlier
    turns stay in the history they were placed in (and count as in front), but are not this turn's."""
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"),
                    default=-1)
    texts: list[str] = []
    index = last_user - 1
    while index >= 0 and isinstance(messages[index], dict) and messages[index].get("role") in ("system",
                                                                                                 "developer"):
        _strings(messages[index], texts)
        index -= 1
    return find_recall_block(texts)


def find_recall_block(texts: Iterable[str]) -> str | None:
    for text in texts:
        lines = text.split("\n")
        if RECALL_HEAD in lines and RECALL_END in lines:
            start = lines.index(RECALL_HEAD)
            end = lines.index(RECALL_END, start)
            return "\n".join(lines[start:end + 1])
    return None


def block_items(block: str) -> list[str]:
    """The block's records: each bulleted line with the indented lines under it (a dated excerpt's text);
    headings and the preamble are not records."""
    items: list[str] = []
    current: list[str] | None = None
    for line in block.split("\n")[1:-1]:
        if line.lstrip().startswith(("-", "*", "•")):
            current = [line.strip()]
            items.append("")
        elif line.startswith((" ", "\t")) and line.strip() and current is not None:
            current.append(line.strip())
        else:
            current = None
            continue
        items[-1] = "\n".join(current)
    return items


class Tally:
    """One approach's figures, per question kind."""

    def __init__(self, name: str, conversation: Conversation) -> None:
        self.name, self.conversation = name, conversation
        self.rows: dict[str, dict[str, list[float]]] = {}
        self.block_lines_used = self.block_lines = 0

    def _row(self, kind: str) -> dict[str, list[float]]:
        return self.rows.setdefault(kind, {"answered": [], "old_alone": [], "block_tokens": [], "precision": []})

    def question(self, question: Question, texts: list[str], block_tokens: int | None = None) -> None:
        said = sentences(texts)
        facts = self.conversation.facts
        answered = all(shows(said, facts[f]) for f in question.answers)
        for row in (self._row(question.kind), self._row("all")):
            row["answered"].append(float(answered))
            for old in question.olds:
                newer = [f for f in question.answers if facts[f].replaces == old]
                row["old_alone"].append(float(shows(said, facts[old]) and not any(shows(said, facts[n])
                                                                                   for n in newer)))
            if block_tokens is not None:
                row["block_tokens"].append(block_tokens)

    def block(self, kind: str | None, block: str, wanted: Sequence[Fact], user_text: str) -> None:
        """Precision of one recall block: its records (fact lines, excerpts) that show a needed fact or a fact the
        turn talks about. `wanted`: the question's answer facts and replaced versions (empty off question turns)."""
        lines = block_items(block)
        if not lines:
            return
        said = user_text.lower()
        used = 0
        for line in lines:
            low = sentences([line])
            matched = [f for f in self.conversation.facts.values() if shows(low, f)]
            if any(f in wanted for f in matched) or any(
                    f.subject.lower() in said or f.object.lower() in said for f in matched):
                used += 1
        self.block_lines += len(lines)
        self.block_lines_used += used
        if kind is not None:
            for name in (kind, "all"):
                self._row(name)["precision"].append(used / len(lines))

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for kind, row in self.rows.items():
            tokens = row["block_tokens"]
            out[kind] = {
                "questions": len(row["answered"]),
                "answer_in_front": _share(row["answered"]),
                "changed_facts_asked": len(row["old_alone"]),
                "old_value_alone": _share(row["old_alone"]),
                "old_value_alone_count": int(sum(row["old_alone"])),
                "blocks": len(tokens),
                "block_tokens_p50": statistics.median(tokens) if tokens else None,
                "block_tokens_p90": _p90(tokens),
                "block_precision": _share(row["precision"]),
            }
        out["block_precision_all_turns"] = (round(self.block_lines_used / self.block_lines, 3)
                                            if self.block_lines else None)
        return out


def _share(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 3) if values else None


def _p90(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.9 * len(ordered)) - 1))]
