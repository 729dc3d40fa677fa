"""A newer fact retires an older one only when both cannot hold: two true things about one person stand side by
side, whatever their dates or everyday words; a changed value of one attribute still replaces the old one."""

from __future__ import annotations

import pytest

from engine.graph import Relation
from providers.judge import FactClaim
from providers.local_judge import LocalJudge
from providers.prompts import TASKS

RETIRING = {Relation.CONTRADICTS, Relation.UPDATES}

BOTH_STAND = [
    (FactClaim("Caroline went to a support group on 7 May.", "Caroline", "support group"),
     FactClaim("Caroline started a pottery class on 2 July.", "Caroline", "pottery class")),
    (FactClaim("Caroline went to a support group on 7 May.", "Caroline", "support group"),
     FactClaim("Caroline actually wanted to tell Melanie about her school event.", "Caroline", "school event")),
    (FactClaim("Caroline went to the support group on 7 May.", "Caroline", "support group"),
     FactClaim("Caroline went to the support group on 20 May.", "Caroline", "support group")),
    (FactClaim("Melanie took her kids camping in the mountains.", "Melanie", "camping"),
     FactClaim("Melanie now paints sunsets on weekends.", "Melanie", "painting")),
    (FactClaim("Melanie likes running in the morning.", "Melanie", "running"),
     FactClaim("Melanie does not have a dog.", "Melanie", "dog")),
    # Turns of a real chat noted verbatim and dated, the speaker the subject: another date, a change word
    # ("now", "move") or a "not" in another sentence of the same person is not a contradiction.
    (FactClaim("On 20 January 2023 Jon said: I'm starting a dance studio 'cause I'm passionate about dancing.",
               "Jon", "passionate"),
     FactClaim("On 11 May 2023 Jon said: Losing my job gave me the push to start my dream business! Now I'm "
               "stepping into the unknown.", "Jon", "business")),
    (FactClaim("On 20 January 2023 Jon said: Wow, great idea! Let's go to a dance class, it'll be so much fun!",
               "Jon", "great"),
     FactClaim("On 29 January 2023 Jon said: Yeah, good flooring's crucial. I'm after Marley flooring, it helps "
               "dancers move.", "Jon", "flooring")),
    (FactClaim("On 20 January 2023 Gina said: Hey Jon! Good to see you. What's up? Anything new?", "Gina",
               "Anything"),
     FactClaim("On 4 February 2023 Gina said: I'm here for you no matter what! Anything you want to say about "
               "your biz?", "Gina", "Anything")),
    (FactClaim("On 20 January 2023 Jon said: Lost my job as a banker yesterday, so I'm starting my own business.",
               "Jon", "yesterday"),
     FactClaim("On 20 January 2023 Gina said: Sorry about your job Jon! I also lost my job at Door Dash this "
               "month.", "Gina", "Unfortunately")),
]

# Two orders whose dates share a day: "May" is a stopword, so only the day was left to say the older date is
# mentioned, and the other order's "March 19" retired "May 19".
BOTH_STAND.append(
    (FactClaim("Order ORD-57107 now ships on May 19.", "ORD-57107", "May 19"),
     FactClaim("Order ORD-50350 ships from the Lisbon warehouse on March 19.", "ORD-50350", "March 19")))

REPLACED = [
    (FactClaim("The launch is on 3 March.", "launch", "3 March"),
     FactClaim("The launch moves from 3 to 10 March.", "launch", "10 March")),
    (FactClaim("The launch is on Wednesday.", "launch", "Wednesday"),
     FactClaim("The launch moved to Thursday.", "launch", "Thursday")),
    (FactClaim("Dana owns the checkout migration.", "Dana", "checkout migration"),
     FactClaim("Raj now owns the checkout migration.", "Raj", "checkout migration")),
    (FactClaim("The checkout migration is 40% done.", "checkout migration", "40%"),
     FactClaim("The checkout migration is 70% done.", "checkout migration", "70%")),
]


@pytest.mark.parametrize(("old", "new"), BOTH_STAND, ids=lambda c: c.note[:40])
async def test_two_things_true_of_one_person_both_stand(local_judge: LocalJudge, old: FactClaim,
                                                       new: FactClaim) -> None:
    (verdict,) = await local_judge.judge_contradiction([(old, new)])
    assert verdict.relation not in RETIRING, verdict


@pytest.mark.parametrize(("old", "new"), REPLACED, ids=lambda c: c.note[:40])
async def test_a_changed_value_of_one_attribute_still_retires_the_old(local_judge: LocalJudge, old: FactClaim,
                                                                     new: FactClaim) -> None:
    (verdict,) = await local_judge.judge_contradiction([(old, new)])
    assert verdict.relation in RETIRING, verdict


def test_the_model_judge_is_told_the_same_rule() -> None:
    # The OpenAI-compatible judge decides by these instructions: they must say what the embedded judge does.
    told = TASKS["contradiction"].instructions
    assert "same subject" in told and "same attribute or relation" in told
    assert "a different date" in told and "unsure" in told
