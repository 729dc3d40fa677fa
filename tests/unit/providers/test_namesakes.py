"""The embedded judge among namesakes, and the remote judge's prompt: what the memory knows of each entity
(roles, ties) is judged, not the shared first name."""

from __future__ import annotations

from engine.entities import describe, describe_mention
from providers.judge import EntityMention
from providers.local_judge import LocalJudge
from providers.prompts import TASKS, mention

CTO = EntityMention("Alex", "Alex is our CTO. Alex approved the Q3 hiring plan.",
                    description=describe(["Alex"], ["Alex is our CTO."]))


def _said(name: str, note: str) -> EntityMention:
    return EntityMention(name, note, description=describe_mention(name, note))


async def test_a_namesake_described_otherwise_is_another_person(local_judge: LocalJudge) -> None:
    gym = _said("Alex from the climbing gym", "Alex from the climbing gym belays the user on Thursdays.")
    (verdict,) = await local_judge.judge_same_entity([(gym, CTO)])
    assert not verdict.same


async def test_a_role_or_a_fitting_description_is_the_same_person(local_judge: LocalJudge) -> None:
    role = _said("the CTO", "The CTO signed off the cloud budget.")
    apposition = _said("Alex", "Alex, our CTO, signed off the cloud budget.")
    verdicts = await local_judge.judge_same_entity([(role, CTO), (apposition, CTO)])
    assert all(v.same for v in verdicts)


async def test_undescribed_names_are_judged_as_before(local_judge: LocalJudge) -> None:
    (verdict,) = await local_judge.judge_same_entity([(EntityMention("Dana", "Dana moved the launch."),
                                                       EntityMention("Dana Whitfield", "Dana approved the copy."))])
    assert verdict.same


def test_the_prompt_shows_what_the_memory_knows_of_each() -> None:
    shown = mention(CTO, limit=200)
    assert "known as 'cto'" in shown
    gym = EntityMention("Alex from the climbing gym", description=describe(["Alex from the climbing gym"], []))
    assert "tied to 'climbing gym'" in mention(gym, limit=200)
    assert "namesakes" in TASKS["same_entity"].system
