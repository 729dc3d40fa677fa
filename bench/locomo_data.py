"""LoCoMo's chats as the LoCoMo bench plays them: turns, dates, questions and the texts of their evidence.

The data is the public LoCoMo release (github.com/snap-research/locomo, `data/locomo10.zip`), never shipped with
Lethe: `--data` names the folder it was unzipped into. Both of its layouts are read: one `locomo10.json` holding
the ten chats (each with `sample_id` "conv-26", `conversation` and `qa`), or one file per chat named by its
number (`26.json`, the chat's sessions and `qa` at the top level).

The first speaker is the user, the second the assistant. A turn is a run of the user's messages and the run of
the assistant's that answers it; a session the assistant opens starts with a turn whose user message is the
session's date, so no message is dropped and none changes speaker.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

__all__ = ["CATEGORIES", "DEVELOPMENT", "HELD_OUT", "Chat", "LocomoTurn", "Question", "load_chats", "normalised",
           "shown"]

# LoCoMo's question categories; 5 (adversarial: the answer is not in the chat) has no evidence to look for.
CATEGORIES = {1: "multi_hop", 2: "temporal", 3: "open_domain", 4: "single_hop"}
DEVELOPMENT = (26, 30, 41, 42, 43, 44)
HELD_OUT = (47, 48, 49, 50)

_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.I)
_SPLIT = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    evidence: tuple[str, ...]  # the dia_ids of the turns that hold its answer


@dataclass
class LocomoTurn:
    number: int
    at: datetime
    user: str
    reply: str
    # (speaker, dia_id, text) of every message of the turn, the user's first.
    said: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class Chat:
    number: int
    user: str
    assistant: str
    turns: list[LocomoTurn]
    texts: dict[str, str]  # dia_id -> the message's text as played
    questions: list[Question]

    @property
    def asked_at(self) -> datetime:
        """When the questions are asked: a day after the chat's last turn."""
        return self.turns[-1].at + timedelta(days=1)


def load_chats(folder: Path, numbers: tuple[int, ...]) -> list[Chat]:
    """The chats of these numbers, in that order; names what is missing."""
    found = dict(_raw_chats(folder))
    missing = [n for n in numbers if n not in found]
    if missing:
        raise SystemExit(f"--data {folder}: no LoCoMo chat numbered {missing} (found {sorted(found) or 'none'}); "
                         "unzip data/locomo10.zip of github.com/snap-research/locomo and name its folder")
    return [_chat(n, found[n]) for n in numbers]


def _raw_chats(folder: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for path in sorted(folder.rglob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, list):
            for item in data:
                if isinstance(item, dict) and "conversation" in item:
                    yield int(str(item["sample_id"]).rsplit("-", 1)[-1]), {**item["conversation"], "qa": item["qa"]}
        elif isinstance(data, dict) and "speaker_a" in data and path.stem.isdigit():
            yield int(path.stem), data


def _chat(number: int, raw: dict[str, Any]) -> Chat:
    user, assistant = raw["speaker_a"], raw["speaker_b"]
    turns: list[LocomoTurn] = []
    texts: dict[str, str] = {}
    sessions = sorted(int(k.split("_")[1]) for k in raw if re.fullmatch(r"session_\d+", k) and raw[k])
    for session in sessions:
        start = _when(raw[f"session_{session}_date_time"])
        current: LocomoTurn | None = None
        for message in raw[f"session_{session}"]:
            text = message["text"] + (f" [shares {message['blip_caption']}]" if message.get("blip_caption") else "")
            texts[message["dia_id"]] = text
            is_user = message["speaker"] == user
            if current is None or (is_user and current.reply):
                current = LocomoTurn(len(turns) + 1, start, "", "")
                turns.append(current)
                if not is_user:
                    current.user = f"({raw[f'session_{session}_date_time']})"
            if is_user:
                current.user = f"{current.user}\n{text}".strip()
            else:
                current.reply = f"{current.reply}\n{text}".strip()
            current.said.append((message["speaker"], message["dia_id"], text))
    _space(turns)
    return Chat(number, user, assistant, turns, texts, _questions(raw["qa"], texts))


def _space(turns: list[LocomoTurn]) -> None:
    """A minute between turns of one session, so every turn has a time of its own."""
    for previous, turn in zip(turns, turns[1:], strict=False):
        if turn.at <= previous.at:
            turn.at = previous.at + timedelta(minutes=1)


def _questions(qa: list[dict[str, Any]], texts: dict[str, str]) -> list[Question]:
    out = []
    for item in qa:
        category = CATEGORIES.get(int(item.get("category", 0)))
        # Some evidence lists join two ids in one string ("D8:6; D9:17"); ids not in the chat are left out.
        ids = tuple(dict.fromkeys(i for e in item.get("evidence", []) for i in re.split(r"[;,\s]+", e)
                                  if i in texts))
        if category and ids:
            out.append(Question(item["question"], category, ids))
    return out


def _when(text: str) -> datetime:
    match = _DATE.search(text)
    if match is None:
        raise ValueError(f"a LoCoMo session date that does not read: {text!r}")
    hour, minute, half, day, month, year = match.groups()
    hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    return datetime.strptime(f"{day} {month} {year}", "%d %B %Y").replace(hour=hour_24, minute=int(minute),
                                                                         tzinfo=UTC)


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def shown(request: str, evidence: str) -> bool:
    """Is this message's text in front of the model: whole, or (a long one a passage may have cut) two thirds
    of its sentences. `request` is already normalised (`normalised`)."""
    whole = _normal(evidence)
    if whole in request:
        return True
    parts = [p for p in (_normal(s) for s in _SPLIT.split(evidence)) if len(p.split()) >= 3]
    return len(parts) >= 3 and sum(p in request for p in parts) * 3 >= len(parts) * 2


def normalised(texts: list[str]) -> str:
    return "\n".join(_normal(t) for t in texts)
