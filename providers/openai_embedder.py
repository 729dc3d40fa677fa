"""Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint, asked for 384 dimensions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import openai

from contracts.errors import ProviderError
from contracts.vectors import DIMENSIONS
from providers.embedder import Vectors, check_texts, normalise_rows
from providers.openai_client import make_client, openai_errors
from providers.usage import UsageScope, UsageSink, record_usage

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """`text-embedding-3-*` style models with `dimensions=384`, in batches, every call's usage recorded."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str,
        dimensions: int = DIMENSIONS,
        timeout_seconds: float = 20.0,
        max_retries: int = 3,
        batch_size: int = 256,
        usage_sink: UsageSink | None = None,
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self._client = client or make_client(
            base_url=base_url, api_key=api_key, timeout_seconds=timeout_seconds, max_retries=max_retries
        )
        self._model = model
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._usage_sink = usage_sink

    @property
    def model_id(self) -> str:
        # The dimension is part of the identity: a 384-d cut of a model is not comparable with its full size.
        return f"openai/{self._model}@{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> Vectors:
        items = check_texts(texts)
        out = np.zeros((len(items), self._dimensions), dtype=np.float32)
        for start in range(0, len(items), self._batch_size):
            batch = items[start : start + self._batch_size]
            # Some servers refuse empty input; an empty text has nothing to embed anyway.
            sendable = [text if text.strip() else " " for text in batch]
            out[start : start + len(batch)] = await self._embed_batch(sendable, scope)
        return out

    async def _embed_batch(self, batch: list[str], scope: UsageScope | None) -> Vectors:
        with openai_errors("embeddings"):
            response = await self._client.embeddings.create(
                model=self._model, input=batch, dimensions=self._dimensions, encoding_format="float"
            )
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(batch):
            raise ProviderError(f"embeddings: asked for {len(batch)} vectors, got {len(data)}")
        rows = np.array([item.embedding for item in data], dtype=np.float32)
        if rows.ndim != 2 or rows.shape[1] != self._dimensions:
            raise ProviderError(f"embeddings: expected {self._dimensions} dimensions, got shape {rows.shape}")
        if not np.isfinite(rows).all():
            raise ProviderError("embeddings: the server returned non-finite numbers")
        usage = response.usage
        await record_usage(
            self._usage_sink,
            scope,
            provider="openai",
            model=self._model,
            purpose="embed",
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=0,
        )
        # Shortened OpenAI embeddings are normalised already; other servers' may not be.
        return normalise_rows(rows)
