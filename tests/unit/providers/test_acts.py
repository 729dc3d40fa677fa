"""Acts: the embedded judge reads who said which words; the OpenAI-compatible judge asks for exactly the acts
the engine knows, takes a well-formed answer and falls back to the embedded judge on anything else."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from engine.salience import Act
from providers.local_acts import act_of, speakers
from providers.local_judge import LocalJudge
from providers.openai_judge import OpenAIJudge
from providers.prompts import TASKS

CASES = [
    ("user: When is the design review?\nassistant: The design review is on Wednesday at 10.", Act.CORRECTION,
     "user: No, it moved to Thursday. Please keep that.\nassistant: Noted: Thursday."),
    ("user: What's the status of ticket LTH-1042?\nassistant: LTH-1042 is in review.", Act.LOOKUP, None),
    ("user: Let's go with the annual plan at 96 dollars.\nassistant: Done, annual plan it is.", Act.DECISION, None),
    ("user: How many seats are left?\nassistant: I was wrong earlier, sorry: 12 seats, not 20.",
     Act.SELF_CORRECTION, None),
    ("user: thanks, have a good evening\nassistant: You too!", Act.SMALL_TALK, None),
    ("user: Draft the release notes for 2.4.\nassistant: Here is a draft: ...", Act.TASK, None),
]


@pytest.mark.parametrize(("text", "act", "also"), CASES, ids=[c[1].value for c in CASES])
def test_the_embedded_judge_reads_the_act_from_who_said_what(text: str, act: Act, also: str | None) -> None:
    assert act_of(also or text).act is act


def test_a_correction_counts_only_in_the_users_words() -> None:
    # The assistant setting the user straight is not the user's correction, nor is a user asking what went wrong.
    assert act_of("user: Which day is the review?\nassistant: No, it moved to Thursday.").act is Act.LOOKUP
    assert act_of("user: What went wrong with the deploy?").act is not Act.CORRECTION


def test_a_decision_the_assistant_only_reports_is_not_one() -> None:
    assert act_of("user: Is the copy final?\nassistant: Legal approved it on Monday.").act is Act.LOOKUP


def test_lines_without_a_role_continue_the_message_before() -> None:
    assert speakers("user: first line\nsecond line\nassistant: ok") == [("user", "first line\nsecond line"),
                                                                        ("assistant", "ok")]


async def test_the_local_judge_answers_one_act_per_episode(local_judge: LocalJudge) -> None:
    verdicts = await local_judge.judge_acts([c[2] or c[0] for c in CASES])
    assert [v.act for v in verdicts] == [c[1] for c in CASES]
    assert all(0.0 <= v.score <= 1.0 for v in verdicts)


def test_the_prompt_offers_exactly_the_engines_acts() -> None:
    schema = TASKS["acts"].response_format()["json_schema"]["schema"]
    assert schema["properties"]["items"]["items"]["properties"]["act"]["enum"] == [a.value for a in Act]


class _Completions:
    """Stands in for `client.chat.completions`: answers every call with `content`, recording what was asked."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.asked: list[dict[str, Any]] = []

    async def create(self, **request: Any) -> Any:
        self.asked.append(request)
        message = SimpleNamespace(content=self.content)
        return SimpleNamespace(usage=None, choices=[SimpleNamespace(message=message, finish_reason="stop")])


def _judge(content: str, fallback: LocalJudge) -> tuple[OpenAIJudge, _Completions]:
    completions = _Completions(content)
    client = SimpleNamespace(chat=SimpleNamespace(completions=completions))
    return OpenAIJudge(base_url="http://127.0.0.1:9", api_key="k", model="m", fallback=fallback,
                       client=client), completions  # type: ignore[arg-type]


async def test_the_openai_judge_takes_the_models_acts(local_judge: LocalJudge) -> None:
    answer = json.dumps({"items": [{"i": 0, "act": "small_talk", "score": 0.8},
                                   {"i": 1, "act": "correction", "score": 0.9}]})
    judge, completions = _judge(answer, local_judge)
    verdicts = await judge.judge_acts(["user: hi", "user: No, it moved to Thursday."])
    assert [v.act for v in verdicts] == [Act.SMALL_TALK, Act.CORRECTION] and judge.fallbacks == 0
    assert completions.asked[0]["response_format"]["json_schema"]["name"] == "judge_acts"


@pytest.mark.parametrize("junk", ["not json", json.dumps({"items": [{"i": 0, "act": "shouting", "score": 1}]}),
                                  json.dumps({"items": []})])
async def test_the_openai_judge_falls_back_to_the_embedded_acts_on_junk(local_judge: LocalJudge, junk: str) -> None:
    judge, _ = _judge(junk, local_judge)
    verdicts = await judge.judge_acts(["user: No, that's wrong: it moved to Thursday."])
    assert [v.act for v in verdicts] == [Act.CORRECTION] and judge.fallbacks == 1
