"""Build providers from plain values; the CLI and gateway pass their settings' fields in.

counter = make_token_counter()
embedder = make_embedder(kind=s.embedder, onnx_threads=s.onnx_threads, openai_base_url=s.openai_base_url, ...)
judge = make_judge(kind=s.judge, embedder=embedder, openai_base_url=s.openai_base_url, ...)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from contracts.errors import InvalidInput
from providers.embedder import CachingEmbedder, Embedder, LocalEmbedder
from providers.judge import Judge
from providers.local_judge import LocalJudge
from providers.openai_embedder import OpenAIEmbedder
from providers.openai_judge import OpenAIJudge
from providers.precision import PRECISIONS, Precision
from providers.tokens import TiktokenCounter, TokenCounter
from providers.usage import UsageSink

__all__ = ["make_embedder", "make_judge", "make_token_counter"]

Kind = Literal["local", "openai"]


def make_token_counter() -> TokenCounter:
    return TiktokenCounter()


def make_embedder(
    *,
    kind: Kind = "local",
    onnx_threads: int = 1,
    onnx_parallel: int = 1,
    precision: Precision = "int8",
    model_cache: Path | None = None,
    openai_base_url: str = "https://api.openai.com/v1",
    openai_api_key: str | None = None,
    openai_model: str = "text-embedding-3-small",
    openai_timeout_seconds: float = 20.0,
    openai_max_retries: int = 3,
    usage_sink: UsageSink | None = None,
    cache_entries: int = 50_000,
) -> Embedder:
    """The embedder `kind` names, behind a content-hash cache; `precision`: the local model's matrix products
    (a deployment's `auto` is settled before, cli/precision.py)."""
    inner: Embedder
    if precision not in PRECISIONS:
        raise InvalidInput(f"unknown embedder precision {precision!r}: expected int8 or float32",
                           field="embedder_precision")
    if kind == "local":
        inner = LocalEmbedder(threads=onnx_threads, parallel=onnx_parallel, model_cache=model_cache,
                              int8=precision == "int8")
    elif kind == "openai":
        inner = OpenAIEmbedder(
            base_url=openai_base_url,
            api_key=openai_api_key,
            model=openai_model,
            timeout_seconds=openai_timeout_seconds,
            max_retries=openai_max_retries,
            usage_sink=usage_sink,
        )
    else:
        raise InvalidInput(f"unknown embedder {kind!r}: expected local or openai", field="embedder")
    return CachingEmbedder(inner, max_entries=cache_entries)


def make_judge(
    *,
    kind: Kind = "local",
    embedder: Embedder,
    openai_base_url: str = "https://api.openai.com/v1",
    openai_api_key: str | None = None,
    openai_model: str = "gpt-4o-mini",
    openai_timeout_seconds: float = 20.0,
    openai_max_retries: int = 3,
    deadline_seconds: float | None = None,
    max_completion_tokens: int = 1024,
    usage_sink: UsageSink | None = None,
) -> Judge:
    """The judge `kind` names; the OpenAI judge falls back to the embedded one built on `embedder`."""
    local = LocalJudge(embedder)
    if kind == "local":
        return local
    if kind == "openai":
        return OpenAIJudge(
            base_url=openai_base_url,
            api_key=openai_api_key,
            model=openai_model,
            fallback=local,
            timeout_seconds=openai_timeout_seconds,
            max_retries=openai_max_retries,
            deadline_seconds=deadline_seconds,
            max_completion_tokens=max_completion_tokens,
            usage_sink=usage_sink,
        )
    raise InvalidInput(f"unknown judge {kind!r}: expected local or openai", field="judge")
