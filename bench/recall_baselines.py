"""The recall bench's baselines and peer, over the same conversation, token counter and embedder as Lethe.

- truncation: the newest messages that fit the ceiling.
- vector: the 5 messages nearest the question (cosine over the project's embedder, numpy), then the newest
  messages in the room left.
- mem0: mem0's top 5 for the question (bench/peers/mem0_peer.py: infer off, same embedder, pgvector in the
  stack's own Postgres), then the newest messages in the room left.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
from recall_conversation import Conversation, Question, Turn
from recall_scoring import Tally, request_texts

__all__ = ["Baselines"]

TOP = 5


class Baselines:
    def __init__(self, conversation: Conversation, counter: Any, embedder: Any, ceiling: int, model: str,
                 postgres_dir: Path | None) -> None:
        self.conversation, self.counter, self.embedder = conversation, counter, embedder
        self.ceiling, self.model = ceiling, model
        self.messages: list[dict[str, Any]] = []
        self.tokens: list[int] = []
        self.vectors = np.zeros((0, embedder.dimensions), dtype=np.float32)
        self.tallies = {name: Tally(name, conversation) for name in ("truncation", "vector")}
        self._empty = counter.count_request({"model": model, "messages": []})
        self.peer: Any = None
        self.mem0_ms: dict[str, list[float]] = {"add": [], "search": []}
        self.same_top = 0  # questions where mem0's top 5 are the vector baseline's top 5
        if postgres_dir is not None:
            self.tallies["mem0"] = Tally("mem0", conversation)
            self.peer = _mem0_peer(postgres_dir, embedder)

    def _size(self, message: dict[str, Any]) -> int:
        return self.counter.count_request({"model": self.model, "messages": [message]}) - self._empty

    def add_turn(self, turn: Turn) -> None:
        new = [{"role": "user", "content": turn.user}]
        if turn.tool is not None:
            call = f"call_logs_{turn.number}"
            new += [{"role": "assistant", "content": "Reading the logs.", "tool_calls": [
                        {"id": call, "type": "function", "function": {"name": "read_logs", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": call, "content": turn.tool}]
        new.append({"role": "assistant", "content": turn.reply})
        self.messages += new
        self.tokens += [self._size(m) for m in new]
        self.vectors = np.vstack([self.vectors, self.embedder.embed_sync([m["content"] for m in new])])
        if self.peer is not None:
            started = time.perf_counter()
            self.peer.add("recall-bench", [{"role": m["role"], "content": m["content"]} for m in new])
            self.mem0_ms["add"].append((time.perf_counter() - started) * 1000)

    def _newest(self, room: int) -> list[dict[str, Any]]:
        kept, used = 0, 0
        for size in reversed(self.tokens):
            if used + size > room:
                break
            used += size
            kept += 1
        return self.messages[len(self.messages) - kept:] if kept else []

    def _request(self, found: list[str], question: Question) -> list[dict[str, Any]]:
        asked = {"role": "user", "content": question.text}
        head = [{"role": "system", "content": "Earlier messages that may be relevant:\n" + "\n".join(found)}] \
            if found else []
        room = self.ceiling - self._empty - sum(self._size(m) for m in (*head, asked))
        return [*head, *self._newest(room), asked]

    def question(self, question: Question) -> None:
        self.tallies["truncation"].question(question, request_texts(self._request([], question)))
        nearest: list[str] = []
        if len(self.messages):
            query = self.embedder.embed_sync([question.text])[0]
            best = np.argsort(-(self.vectors @ query))[:TOP]
            nearest = [self.messages[i]["content"] for i in best]
            self.tallies["vector"].question(question, request_texts(self._request(nearest, question)))
        if self.peer is not None:
            started = time.perf_counter()
            found = self.peer.search("recall-bench", question.text, limit=TOP)
            self.mem0_ms["search"].append((time.perf_counter() - started) * 1000)
            self.same_top += sorted(found) == sorted(nearest)
            self.tallies["mem0"].question(question, request_texts(self._request(found, question)))

    def summaries(self) -> dict[str, Any]:
        return {name: tally.summary() for name, tally in self.tallies.items()}

    def mem0_info(self) -> dict[str, Any] | None:
        if self.peer is None:
            return None
        return {"llm_calls": self.peer.llm_calls, "embed_calls": self.peer.embed_calls,
                "questions_with_the_vector_baselines_top5": self.same_top,
                **{f"{k}_ms_p50": round(statistics.median(v), 2) for k, v in self.mem0_ms.items() if v}}

    def close(self) -> None:
        if self.peer is not None:
            self.peer.close()


def _mem0_peer(postgres_dir: Path, embedder: Any) -> Any:
    """mem0 in its own database of the stack's running Postgres (found through its data directory)."""
    import psycopg
    from peers.mem0_peer import Mem0Peer

    from store.embedded import running_url  # lethe dev owns the server and stops it

    with psycopg.connect(running_url(postgres_dir), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'mem0_bench'").fetchone():
            conn.execute("CREATE DATABASE mem0_bench")
    return Mem0Peer(running_url(postgres_dir, "mem0_bench"), embedder)
