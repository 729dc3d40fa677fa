"""The OpenAI-compatible embedder and judge over real HTTP against the scripted local server."""

from __future__ import annotations

import json

import numpy as np
import pytest
from openai_fake import FakeOpenAI, Step

from contracts.errors import ProviderError
from engine.graph import Relation
from providers.local_judge import LocalJudge
from providers.openai_embedder import OpenAIEmbedder
from providers.openai_judge import OpenAIJudge
from providers.usage import InMemoryUsageSink, UsageScope

SCOPE = UsageScope(tenant_id="t1", memory_id="m1")
PAIRS = [
    ("We will raise prices by 10% next quarter.", "We will not raise prices next quarter."),
    ("The checkout migration is 40% done.", "The checkout migration is 70% done."),
]


def _embedder(fake: FakeOpenAI, **options: object) -> OpenAIEmbedder:
    settings = {"timeout_seconds": 5.0, "max_retries": 2, **options}
    return OpenAIEmbedder(base_url=fake.base_url, api_key="k", model="text-embedding-3-small", **settings)


def _judge(fake: FakeOpenAI, local: LocalJudge, **options: object) -> OpenAIJudge:
    settings = {"timeout_seconds": 5.0, "max_retries": 1, **options}
    return OpenAIJudge(base_url=fake.base_url, api_key="k", model="gpt-4o-mini", fallback=local, **settings)


async def test_embed_returns_unit_vectors_and_records_usage(fake: FakeOpenAI) -> None:
    sink = InMemoryUsageSink()
    embedder = _embedder(fake, usage_sink=sink, batch_size=2)
    vectors = await embedder.embed(["one", "two", "three"], scope=SCOPE)
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert [r["dimensions"] for r in fake.requests] == [384, 384]
    assert embedder.model_id == "openai/text-embedding-3-small@384"
    assert [(u.tenant_id, u.memory_id, u.purpose) for u in sink.records] == [("t1", "m1", "embed")] * 2
    assert sink.totals() == (3, 0)


@pytest.mark.parametrize("status", [429, 500])
async def test_embed_retries_after_a_transient_error(fake: FakeOpenAI, status: int) -> None:
    fake.plan(Step(status=status), Step(status=status))
    vectors = await _embedder(fake).embed(["hello"])
    assert vectors.shape == (1, 384)
    assert len(fake.requests) == 3


async def test_embed_gives_up_with_provider_error(fake: FakeOpenAI) -> None:
    fake.plan(*[Step(status=500)] * 3)
    with pytest.raises(ProviderError, match="HTTP 500") as caught:
        await _embedder(fake).embed(["hello"])
    assert caught.value.__cause__ is not None


async def test_embed_timeout_is_a_provider_error(fake: FakeOpenAI) -> None:
    fake.plan(Step(delay=1.5))
    with pytest.raises(ProviderError, match="timed out"):
        await _embedder(fake, timeout_seconds=0.3, max_retries=0).embed(["slow"])


async def test_judge_believes_a_complete_answer(fake: FakeOpenAI, local_judge: LocalJudge) -> None:
    answer = {
        "items": [
            {"i": 1, "relation": "updates", "score": 0.7},
            {"i": 0, "relation": "restates", "score": 0.6},
        ]
    }
    fake.plan(Step(content=json.dumps(answer)))
    sink = InMemoryUsageSink()
    judge = _judge(fake, local_judge, usage_sink=sink)
    verdicts = await judge.judge_contradiction(PAIRS, scope=SCOPE)
    assert [v.relation for v in verdicts] == [Relation.RESTATES, Relation.UPDATES]
    assert judge.fallbacks == 0
    request = fake.requests[0]
    assert request["response_format"]["type"] == "json_schema"
    assert request["max_tokens"] <= 1024
    assert sink.records[0].purpose == "judge_contradiction"
    assert sink.totals() == (100, 20)


@pytest.mark.parametrize(
    "step",
    [
        Step(content="Sure! Here is my answer: contradicts"),
        Step(content='{"items": [{"i": 0, "relation": "contradicts", "score": 0.9}]}'),
        Step(
            content='{"items": [{"i": 0, "relation": "maybe", "score": 0.9}, '
            '{"i": 1, "relation": "updates"}]}'
        ),
        Step(
            content='{"items": [{"i": 0, "relation": "contradicts", "score": 0.9}, {"i": 0, '
            '"relation": "updates", "score": 0.9}]}'
        ),
        Step(
            content='{"items": [{"i": 0, "relation": "contradicts", "score": 0.9}, {"i": 1, '
            '"relation": "updates", "score": 0.9}]}',
            finish_reason="length",
        ),
        Step(status=500),
        Step(delay=2.0),
    ],
    ids=["prose", "missing-item", "bad-values", "repeated-item", "truncated", "http-500", "deadline"],
)
async def test_judge_falls_back_to_the_embedded_judge(
    fake: FakeOpenAI, local_judge: LocalJudge, step: Step
) -> None:
    fake.plan(step, step)
    judge = _judge(fake, local_judge, max_retries=1, deadline_seconds=0.8)
    verdicts = await judge.judge_contradiction(PAIRS, scope=SCOPE)
    assert verdicts == await local_judge.judge_contradiction(PAIRS)
    assert judge.fallbacks == 1


async def test_every_judgment_falls_back_on_junk(fake: FakeOpenAI, local_judge: LocalJudge) -> None:
    fake.plan(*[Step(content="not json")] * 6)
    judge = _judge(fake, local_judge)
    facts = ["Dana owns the checkout migration.", "The office coffee machine is broken."]
    dialogue = "Who owns checkout now?"
    assert await judge.score_boundaries(facts) == await local_judge.score_boundaries(facts)
    assert await judge.judge_about(facts, [dialogue]) == await local_judge.judge_about(facts, [dialogue])
    assert await judge.rate_relevance(dialogue, facts) == await local_judge.rate_relevance(dialogue, facts)
    assert await judge.judge_distill(dialogue, facts) == await local_judge.judge_distill(dialogue, facts)
    assert judge.fallbacks == 4
