from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from contracts.errors import InvalidInput
from providers.embedder import CachingEmbedder, LocalEmbedder, _default_model_path, pooled, prime
from providers.onnx_int8 import int8_model
from providers.usage import UsageScope


async def test_local_vectors_are_384d_unit_and_ordered(local_embedder: CachingEmbedder) -> None:
    texts = ["Raise prices by 10%.", "We will increase prices by ten percent.", "The cat sat on the mat.", ""]
    vectors = await local_embedder.embed(texts)
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    one = await local_embedder.embed([texts[2]])
    assert np.allclose(one[0], vectors[2], atol=1e-5)


async def test_model_id_is_stable(local_embedder: CachingEmbedder) -> None:
    assert local_embedder.model_id == "local/all-MiniLM-L6-v2-onnx-int8/dynamic-int8"
    assert local_embedder.dimensions == 384


class _Counting:
    model_id = "test/counting"
    dimensions = 384

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> np.ndarray:
        self.seen.extend(texts)
        return np.ones((len(texts), 384), dtype=np.float32) / np.sqrt(384)


async def test_cache_embeds_each_text_once() -> None:
    inner = _Counting()
    cached = CachingEmbedder(inner, max_entries=2)
    first = await cached.embed(["a", "b", "a"])
    assert first.shape == (3, 384) and inner.seen == ["a", "b"]
    await cached.embed(["b", "c"])
    assert inner.seen == ["a", "b", "c"]
    await cached.embed(["a"])  # evicted by the two-entry limit
    assert inner.seen == ["a", "b", "c", "a"]
    assert (await cached.embed([])).shape == (0, 384)


class _Slow(_Counting):
    """Embeds each text as a vector of its own (its first letter's code), after a pause."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> np.ndarray:
        self.seen.extend(texts)
        await self.release.wait()
        rows = np.zeros((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            rows[i, ord(text[0]) % 384] = 1.0
        return rows


async def test_a_text_being_embedded_is_waited_for_not_embedded_twice() -> None:
    inner = _Slow()
    cached = CachingEmbedder(inner)
    first = asyncio.ensure_future(cached.embed(["a", "b"]))
    second = asyncio.ensure_future(cached.embed(["b", "c"]))
    await asyncio.sleep(0)
    inner.release.set()
    one, two = await asyncio.gather(first, second)
    assert sorted(inner.seen) == ["a", "b", "c"]  # "b" once
    assert np.array_equal(one[1], two[0]) and one[1][ord("b")] == 1.0 and two[1][ord("c")] == 1.0


async def test_a_waiter_embeds_for_itself_when_the_first_call_is_cancelled() -> None:
    inner = _Slow()
    cached = CachingEmbedder(inner)
    first = asyncio.ensure_future(cached.embed(["a"]))
    await asyncio.sleep(0)
    second = asyncio.ensure_future(cached.embed(["a"]))
    await asyncio.sleep(0)
    first.cancel()
    inner.release.set()
    row = await second
    assert row[0][ord("a")] == 1.0 and inner.seen == ["a", "a"]
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_bad_input_names_the_field(local_embedder: CachingEmbedder) -> None:
    with pytest.raises(InvalidInput) as caught:
        await local_embedder.embed(["ok", 3])  # type: ignore[list-item]
    assert caught.value.field == "texts[1]"
    with pytest.raises(InvalidInput):
        await local_embedder.embed("one string")


def test_threads_must_be_positive() -> None:
    with pytest.raises(InvalidInput):
        LocalEmbedder(threads=0)
    with pytest.raises(InvalidInput):
        LocalEmbedder(parallel=0)


async def test_texts_shared_among_threads_come_back_in_their_places() -> None:
    """With `parallel`, a call's texts run on several threads at once: each vector is the one the text gets on
    its own, in the text's place."""
    embedder = LocalEmbedder(threads=1, parallel=3)
    texts = ["Keep 8500 units exact.", "Who owns the follow-up on LTH-500?", "", "The refund line moved.",
             "word " * 70, "Dana took the checkout migration."]
    together = await embedder.embed(texts)
    alone = np.vstack([embedder.embed_sync([text]) for text in texts])
    assert together.shape == (6, 384) and np.allclose(together, alone, atol=1e-6)
    assert np.allclose(await embedder.embed(texts[:1]), alone[:1], atol=1e-6)


@pytest.mark.parametrize("parallel", [1, 2])
async def test_concurrent_calls_run_the_model_on_at_most_parallel_threads(parallel: int) -> None:
    counting = threading.Lock()

    class Watched(LocalEmbedder):
        running = 0
        most = 0

        def embed_sync(self, texts: Sequence[str]) -> np.ndarray:
            with counting:
                Watched.running += 1
                Watched.most = max(Watched.most, Watched.running)
            try:
                return super().embed_sync(texts)
            finally:
                with counting:
                    Watched.running -= 1

    embedder = Watched(threads=1, parallel=parallel)
    calls = [embedder.embed([f"call {n}, text {i}: the rollout plan keeps the tax rates in step" for i in range(4)])
             for n in range(6)]
    done = await asyncio.gather(*calls)
    assert all(v.shape == (4, 384) for v in done)
    assert Watched.most == parallel  # six calls at once, yet never more than `parallel` runs of the model


@pytest.mark.parametrize("int8", [True, False])
def test_texts_of_every_length_in_one_call_embed_as_each_would_alone(int8: bool) -> None:
    """Texts are batched by length (each batch cut to its own longest), or in int8 run one by one: a long
    message's short parts must come out as they would on their own, in their places."""
    embedder = LocalEmbedder(threads=1, batch_size=4, int8=int8)
    texts = ["Keep 8500 units exact.", "word " * 120, "Who owns the follow-up on LTH-500?", "", "a b " * 30,
             "The refund line moved to Thursday."] * 2
    together = embedder.embed_sync(texts)
    alone = np.vstack([embedder.embed_sync([text]) for text in texts])
    assert np.allclose(together, alone, atol=1e-5)


def test_int8_products_keep_the_float_models_meaning(tmp_path: Path) -> None:
    """The int8 model is made from the packaged one, kept in the cache directory, and reused from there; its
    vectors stay close to the float model's and rank sentences the same way."""
    source = _default_model_path()
    made = int8_model(source, directory=tmp_path)
    (kept,) = tmp_path.glob("*.onnx")
    assert kept.read_bytes() == made and not list(tmp_path.glob(".converting-*"))
    stamp = kept.stat().st_mtime_ns
    assert int8_model(source, directory=tmp_path) == made and kept.stat().st_mtime_ns == stamp
    texts = ["Priya moved the billing rewrite to the Lisbon team.", "The billing rewrite now sits with Lisbon.",
             "My sister's wedding is on the 14th of June in Porto.", "The staging database host is db-kestrel-9."]
    fast, exact = LocalEmbedder().embed_sync(texts), LocalEmbedder(int8=False).embed_sync(texts)
    assert (fast * exact).sum(axis=1).min() > 0.98
    assert np.argsort(-(fast @ fast[0]))[:2].tolist() == np.argsort(-(exact @ exact[0]))[:2].tolist() == [0, 1]


async def test_primed_vectors_are_served_without_embedding_and_others_are_not() -> None:
    inner = _Counting()
    cache = CachingEmbedder(inner)
    stored = np.zeros(384, dtype=np.float32)
    stored[7] = 1.0
    # A fact's note with the vector the store kept for it; a vector of the wrong size is not taken.
    prime(cache, {"Priya maintains the image resizer.": stored.tolist(), "odd": [1.0, 0.0]})
    vectors = await cache.embed(["Priya maintains the image resizer.", "odd"])
    assert inner.seen == ["odd"]
    assert np.array_equal(vectors[0], stored)
    prime(inner, {"anything": stored.tolist()})  # an embedder with no cache: nothing to prime, and no error


async def test_pooled_parts_stand_for_the_joined_text(local_embedder: CachingEmbedder) -> None:
    dialogue = ["user: We moved the budget review to April 18 after the finance sync.",
                "assistant: Noted, the budget review is now on April 18.",
                "user: Who is going to present at it?"]
    vectors = await local_embedder.embed([*dialogue, "\n".join(dialogue)])
    whole = pooled(dialogue, vectors[:3])
    assert abs(float(np.linalg.norm(whole)) - 1.0) < 1e-5
    assert float(whole @ vectors[3]) > 0.9  # close to embedding the joined text, which is what it stands for
    assert np.allclose(pooled(dialogue[:1], vectors[:1]), vectors[0], atol=1e-6)  # one part is its own whole
