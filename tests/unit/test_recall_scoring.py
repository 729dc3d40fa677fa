"""The recall bench's checks: what counts as in front of the model, as an old value alone, as this turn's block."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

# Appended, not prepended: bench/providers.py would hide the providers package.
sys.path.append(str(Path(__file__).resolve().parents[2] / "bench"))

from recall_conversation import Conversation, Fact, Question, Turn  # noqa: E402
from recall_scoring import RECALL_END, RECALL_HEAD, Tally, block_items, current_recall_block, request_texts  # noqa: E402

OLD = Fact("f1", 3, "Dana owns the checkout migration.", "Dana", "checkout migration", ("checkout migration", "Dana"))
NEW = Fact("f2", 9, "Priya now owns the checkout migration.", "Priya", "checkout migration",
           ("checkout migration", "Priya"), replaces="f1")
ASKED = Question("q1", 40, "direct", "Who owns the checkout migration?", ("f2",), ("f1",))
CONVERSATION = Conversation(1, 6000, [Turn(1, datetime(2026, 3, 2, tzinfo=UTC), "hi", "hello")],
                            {"f1": OLD, "f2": NEW}, [ASKED])


def _request(*system: str) -> list[dict[str, str]]:
    return [*({"role": "system", "content": text} for text in system), {"role": "user", "content": ASKED.text}]


def _score(*system: str) -> dict[str, object]:
    tally = Tally("t", CONVERSATION)
    tally.question(ASKED, request_texts(_request(*system)))
    return tally.summary()["direct"]


def test_the_answer_counts_only_with_its_key_words_in_one_sentence() -> None:
    assert _score("Facts: Priya now owns the checkout migration.")["answer_in_front"] == 1.0
    assert _score("Priya joined today. The checkout migration is going well.")["answer_in_front"] == 0.0
    # The question itself is not the answer.
    assert _score()["answer_in_front"] == 0.0


def test_an_old_value_alone_is_counted_and_beside_its_replacement_is_not() -> None:
    alone = _score("Dana owns the checkout migration.")
    assert (alone["old_value_alone_count"], alone["answer_in_front"]) == (1, 0.0)
    both = _score("Priya now owns the checkout migration.\n- earlier value: Dana owns the checkout migration.")
    assert (both["old_value_alone_count"], both["answer_in_front"]) == (0, 1.0)


def test_this_turns_block_is_the_one_just_before_the_user_message() -> None:
    earlier = f"{RECALL_HEAD}\n- [2026-03-02 09:00 UTC, turn 3] Dana owns the checkout migration.\n{RECALL_END}"
    current = f"{RECALL_HEAD}\nPreamble.\n## checkout migration\n- [x] Priya now owns the checkout migration.\n" \
              f"- [turn 5, 2026-03-02 10:00 UTC]\n  an excerpt\n  of two lines\n{RECALL_END}"
    messages = [{"role": "system", "content": earlier}, {"role": "user", "content": "older"},
                {"role": "assistant", "content": "ok"}, {"role": "system", "content": current},
                {"role": "user", "content": ASKED.text}]
    assert current_recall_block(messages) == current
    assert current_recall_block(messages[1:3] + messages[4:]) is None
    assert block_items(current) == ["- [x] Priya now owns the checkout migration.",
                                    "- [turn 5, 2026-03-02 10:00 UTC]\nan excerpt\nof two lines"]


def test_block_precision_is_the_share_of_records_the_question_needed() -> None:
    tally = Tally("t", CONVERSATION)
    block = f"{RECALL_HEAD}\n- Priya now owns the checkout migration.\n- The printer needs toner.\n{RECALL_END}"
    tally.question(ASKED, request_texts(_request(block)), block_tokens=30)
    tally.block("direct", block, [NEW, OLD], ASKED.text)
    row = tally.summary()["direct"]
    assert (row["block_precision"], row["block_tokens_p50"]) == (0.5, 30)
