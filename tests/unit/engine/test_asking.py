"""A message that asks about the past gets the larger recall block; any other message the usual one."""

from __future__ import annotations

import pytest

from engine.config import MechanismConfig
from engine.recall.asking import asks_about_past
from engine.recall.placing import block_budget


@pytest.mark.parametrize("text", [
    "When did Caroline go to the LGBTQ support group?",
    "what was the deploy code again",
    "Remind me of the budget we agreed.",
    "As you said last week, the launch is close.",
    "Which hotel did we pick",
])
def test_questions_and_messages_pointing_back_ask_about_the_past(text: str) -> None:
    assert asks_about_past(text)


@pytest.mark.parametrize("text", [
    "", "   ", "Write a function that parses the log lines.", "Thanks, that's all for now.",
    "Can you draft the release notes.",
])
def test_other_messages_do_not(text: str) -> None:
    assert not asks_about_past(text)


def test_a_question_gets_the_larger_block_within_its_share_of_the_ceiling() -> None:
    small = MechanismConfig(ceiling_tokens=6_000)
    assert block_budget(small) == 375  # a sixteenth of the ceiling
    assert block_budget(small, asks_about_past=True) == 1_000  # a sixth of it
    large = MechanismConfig(ceiling_tokens=200_000)
    assert block_budget(large) == 1_200 and block_budget(large, asks_about_past=True) == 2_400
