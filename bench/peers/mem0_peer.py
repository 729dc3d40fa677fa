"""mem0 as a peer for Lethe's benchmarks: raw messages in (no LLM extraction), top-k memories out.

Interface (the recall bench and the benchmark suite both use it):

    from bench.peers.mem0_peer import Mem0Peer          # or, with bench/ on sys.path: from peers.mem0_peer ...
    peer = Mem0Peer(dsn, embedder)                       # dsn: a libpq URL of a Postgres with pgvector
    peer.add("user-1", [{"role": "user", "content": "..."}, {"role": "assistant", "content": "..."}])
    texts = peer.search("user-1", "who owns the checkout migration?", limit=5)   # -> list[str], best first
    peer.llm_calls   # 0: proof that mem0's LLM was never asked for anything
    peer.close()

- `dsn`: e.g. `store.embedded.running_url(dir)` (unix socket) or `postgresql://user:pw@host:port/db`. The peer
  keeps its rows in its own table (`collection`, default `mem0_bench`) and creates the `vector` extension if missing.
- `embedder`: the project's embedder (`providers.factory.make_embedder()` or `providers.embedder.LocalEmbedder`),
  plugged in as mem0's embedding model, so mem0 and Lethe compare on the same vectors (384 dimensions).
  An embedder with `embed_sync` (LocalEmbedder) is called on the caller's thread; any other (the async protocol
  only, e.g. the caching wrapper) runs on a private event loop thread, so the peer works from sync and async code.
- `add` stores each message as one memory (`infer=False`: no fact extraction, no LLM), scoped to `user_id`.
  mem0 skips `system` messages; other roles are stored as they are.
- `search` is mem0's own search (vector similarity, plus its BM25 keyword score on pgvector), scoped to `user_id`.
  spaCy is not installed, so mem0's lemmatizer and entity boost fall back to the raw text (mem0 then neither
  downloads a model nor boosts by entity).

mem0 insists on an LLM config even with `infer=False`: it gets an OpenAI client pointed at a closed local port with
a dummy key, and its `generate_response` is replaced by a counter that raises, so a call would both fail loudly
and show in `llm_calls`. Telemetry is turned off (`MEM0_TELEMETRY=False`) and mem0's home (`MEM0_DIR`, its SQLite
history) goes to a temporary directory before mem0 is imported.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from typing import Any

__all__ = ["Mem0Peer"]


def _quiet_mem0_home() -> str:
    home = tempfile.mkdtemp(prefix="lethe-bench-mem0-")
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", home)
    return home


class _Embeddings:
    """Sync embedding calls over the project's embedder."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self._sync = getattr(embedder, "embed_sync", None)
        self._loop: asyncio.AbstractEventLoop | None = None
        if self._sync is None:
            self._loop = asyncio.new_event_loop()
            threading.Thread(target=self._loop.run_forever, daemon=True, name="mem0-peer-embed").start()
        self.calls = 0

    def vectors(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self._sync is not None:
            matrix = self._sync(list(texts))
        else:
            assert self._loop is not None
            matrix = asyncio.run_coroutine_threadsafe(self._embedder.embed(list(texts)), self._loop).result()
        return [[float(x) for x in row] for row in matrix]

    def close(self) -> None:
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)


class Mem0Peer:
    """mem0's `Memory` on pgvector with the project's embedder and no LLM; see the module docstring."""

    def __init__(self, dsn: str, embedder: Any, *, collection: str = "mem0_bench") -> None:
        self._home = _quiet_mem0_home()
        # Without spaCy mem0 warns once per process that it falls back to the raw text; that is the setup here.
        logging.getLogger("mem0.utils.spacy_models").setLevel(logging.ERROR)
        from mem0 import Memory
        from mem0.embeddings.base import EmbeddingBase

        self._embeddings = _Embeddings(embedder)
        dims = int(getattr(embedder, "dimensions", 384))
        embeddings = self._embeddings

        class ProjectEmbedding(EmbeddingBase):
            """mem0's embedding interface, `embed(text, memory_action)`, over the project's embedder."""

            def embed(self, text: Any, memory_action: Any = None) -> list[float]:
                return embeddings.vectors([text if isinstance(text, str) else str(text)])[0]

            def embed_batch(self, texts: Any, memory_action: Any = "add") -> list[list[float]]:
                return embeddings.vectors([str(t) for t in texts])

        config = {
            "vector_store": {"provider": "pgvector", "config": {
                "connection_string": dsn, "collection_name": collection, "embedding_model_dims": dims,
                "hnsw": True, "minconn": 1, "maxconn": 2}},
            # Built, then replaced below before any call: mem0 has no provider slot for an in-process model.
            "embedder": {"provider": "openai", "config": {"api_key": "unused", "embedding_dims": dims,
                                                          "openai_base_url": "http://127.0.0.1:9/v1"}},
            "llm": {"provider": "openai", "config": {"api_key": "never-called",
                                                     "openai_base_url": "http://127.0.0.1:9/v1"}},
            "history_db_path": os.path.join(self._home, "history.db"),
        }
        self._memory = Memory.from_config(config)
        self._memory.embedding_model = ProjectEmbedding()
        self.llm_calls = 0

        def refuse(*args: Any, **kwargs: Any) -> Any:
            self.llm_calls += 1
            raise RuntimeError("mem0 asked its LLM for something; the peer runs with infer=False")

        self._memory.llm.generate_response = refuse  # type: ignore[method-assign]

    @property
    def embed_calls(self) -> int:
        return self._embeddings.calls

    def add(self, user_id: str, messages: list[dict[str, Any]]) -> None:
        """Store each message as one memory of `user_id`, as written (infer off)."""
        kept = [{"role": m["role"], "content": m["content"]} for m in messages
                if isinstance(m.get("content"), str) and m["content"].strip()]
        if kept:
            self._memory.add(kept, user_id=user_id, infer=False)

    def search(self, user_id: str, query: str, limit: int = 5) -> list[str]:
        """The texts of `user_id`'s best `limit` memories for `query`, best first."""
        found = self._memory.search(query, top_k=limit, filters={"user_id": user_id})
        return [str(item["memory"]) for item in found.get("results", [])][:limit]

    def close(self) -> None:
        pool = getattr(self._memory.vector_store, "connection_pool", None)
        if pool is not None:
            pool.close()
        self._embeddings.close()
        shutil.rmtree(self._home, ignore_errors=True)
