from __future__ import annotations

import pytest

from contracts.errors import InvalidInput
from providers.embedder import CachingEmbedder
from providers.factory import make_embedder, make_judge, make_token_counter
from providers.local_judge import LocalJudge
from providers.openai_embedder import OpenAIEmbedder
from providers.openai_judge import OpenAIJudge
from providers.usage import InMemoryUsageSink, Usage, UsageScope, record_usage


def test_factory_builds_each_kind(local_embedder: CachingEmbedder) -> None:
    assert make_token_counter().count_text("hello world") == 2
    assert isinstance(make_judge(kind="local", embedder=local_embedder), LocalJudge)
    judge = make_judge(kind="openai", embedder=local_embedder, openai_base_url="http://127.0.0.1:9/v1")
    assert isinstance(judge, OpenAIJudge)
    remote = make_embedder(kind="openai", openai_base_url="http://127.0.0.1:9/v1", openai_model="m")
    assert isinstance(remote, CachingEmbedder) and remote.model_id == "openai/m@384"
    assert isinstance(remote._inner, OpenAIEmbedder)


def test_factory_refuses_unknown_kinds(local_embedder: CachingEmbedder) -> None:
    with pytest.raises(InvalidInput):
        make_embedder(kind="remote")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        make_judge(kind="remote", embedder=local_embedder)  # type: ignore[arg-type]


async def test_usage_is_recorded_per_tenant_and_memory() -> None:
    sink = InMemoryUsageSink()
    await record_usage(
        sink,
        UsageScope("t", "m"),
        provider="openai",
        model="x",
        purpose="embed",
        prompt_tokens=5,
        completion_tokens=0,
    )
    await record_usage(
        None, None, provider="openai", model="x", purpose="embed", prompt_tokens=5, completion_tokens=0
    )
    assert sink.records == [Usage("t", "m", "openai", "x", "embed", 5, 0)]


async def test_a_failing_sink_never_fails_the_call() -> None:
    class Broken:
        async def record(self, usage: Usage) -> None:
            raise RuntimeError("database down")

    await record_usage(
        Broken(), None, provider="openai", model="x", purpose="embed", prompt_tokens=1, completion_tokens=0
    )
