"""The LoCoMo bench's reading of the public data: turns as Lethe gets them, questions with their evidence, and
what counts as an evidence turn in front of the model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# Appended, not prepended: bench/providers.py would hide the providers package.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

from locomo_data import load_chats, normalised, shown  # noqa: E402

CHAT = {
    "speaker_a": "Caroline", "speaker_b": "Melanie",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
        {"speaker": "Caroline", "dia_id": "D1:2", "text": "I went to a support group yesterday."},
        {"speaker": "Melanie", "dia_id": "D1:3", "text": "That's great!", "blip_caption": "a photo of a lake"},
    ],
    "session_2_date_time": "10:37 am on 27 June, 2023",
    "session_2": [
        {"speaker": "Melanie", "dia_id": "D2:1", "text": "I signed up for a pottery class."},
        {"speaker": "Caroline", "dia_id": "D2:2", "text": "Nice, tell me how it goes."},
    ],
    "session_3_date_time": "9:00 am on 1 July, 2023",
    "session_3": [],
    "qa": [
        {"question": "When did Caroline go to the support group?", "answer": "7 May 2023", "evidence": ["D1:2"],
         "category": 2},
        {"question": "What did both do?", "answer": "x", "evidence": ["D1:2; D2:1", "D9:9"], "category": 1},
        {"question": "What did Caroline adopt?", "answer": "nothing", "evidence": ["D1:1"], "category": 5},
        {"question": "Where?", "answer": "x", "evidence": ["D7:7"], "category": 4},
    ],
}


def test_both_layouts_read_the_same_chat(tmp_path: Path) -> None:
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "26.json").write_text(json.dumps(CHAT))
    (tmp_path / "ten").mkdir()
    body = {k: v for k, v in CHAT.items() if k != "qa"}
    (tmp_path / "ten" / "locomo10.json").write_text(json.dumps([{"sample_id": "conv-26", "conversation": body,
                                                                "qa": CHAT["qa"]}]))
    (one,) = load_chats(tmp_path / "one", (26,))
    (ten,) = load_chats(tmp_path / "ten", (26,))
    assert [(t.user, t.reply, t.at) for t in one.turns] == [(t.user, t.reply, t.at) for t in ten.turns]


def test_turns_keep_every_message_and_its_speaker(tmp_path: Path) -> None:
    (tmp_path / "26.json").write_text(json.dumps(CHAT))
    (chat,) = load_chats(tmp_path, (26,))
    first, second, third = chat.turns
    assert first.user == "Hey Mel!\nI went to a support group yesterday."
    assert first.reply == "That's great! [shares a photo of a lake]"
    # A session the assistant opens starts with a turn whose user message is the session's date.
    assert (second.user, second.reply) == ("(10:37 am on 27 June, 2023)", "I signed up for a pottery class.")
    assert (third.user, third.reply) == ("Nice, tell me how it goes.", "")
    assert [t.at.isoformat() for t in chat.turns] == [
        "2023-05-08T13:56:00+00:00", "2023-06-27T10:37:00+00:00", "2023-06-27T10:38:00+00:00"]
    assert chat.asked_at.isoformat() == "2023-06-28T10:38:00+00:00"


def test_questions_keep_categories_one_to_four_with_evidence_in_the_chat(tmp_path: Path) -> None:
    (tmp_path / "26.json").write_text(json.dumps(CHAT))
    (chat,) = load_chats(tmp_path, (26,))
    assert [(q.category, q.evidence) for q in chat.questions] == [
        ("temporal", ("D1:2",)), ("multi_hop", ("D1:2", "D2:1"))]


def test_a_missing_chat_is_named(tmp_path: Path) -> None:
    (tmp_path / "26.json").write_text(json.dumps(CHAT))
    with pytest.raises(SystemExit, match=r"\[47\]"):
        load_chats(tmp_path, (26, 47))


def test_an_evidence_turn_is_shown_whole_or_by_most_of_its_sentences() -> None:
    evidence = "I went to the lake. It was a sunny day out there. We swam for an hour. Then we had a picnic."
    assert shown(normalised(["Earlier:", "i WENT to the lake.  It was a sunny day out there. We swam for an "
                                         "hour. Then we had a picnic."]), evidence)
    # A passage cut the message: three of its four sentences are there; two are not enough.
    assert shown(normalised(["It was a sunny day out there. We swam for an hour. Then we had a picnic."]), evidence)
    assert not shown(normalised(["We swam for an hour. Then we had a picnic."]), evidence)
    assert not shown(normalised(["I went to the lake"]), "I went to the lake today.")
