"""Size estimates and their correction per model against the provider's own token count."""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["correction_ratio", "estimate_tokens", "updated_ratio"]

# Roughly four characters per token for English text and JSON; a stand-in when no tokenizer is given.
_CHARS_PER_TOKEN = 4


def estimate_tokens(value: Any) -> int:
    """A crude, dependency-free size: text as is, anything else as its compact JSON."""
    if value is None:
        return 0
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


def correction_ratio(
    provider_tokens: int, estimated_tokens: int, *, plausible: tuple[float, float] = (0.5, 2.0)
) -> float | None:
    """The provider's count over our estimate of the same request, or None when it is implausible
    (a reply reported out of order, a count for another request)."""
    if provider_tokens <= 0 or estimated_tokens <= 0:
        return None
    ratio = provider_tokens / estimated_tokens
    low, high = plausible
    return ratio if low <= ratio <= high else None


def updated_ratio(
    previous: float | None,
    provider_tokens: int,
    estimated_tokens: int,
    *,
    plausible: tuple[float, float] = (0.5, 2.0),
) -> float | None:
    """The ratio to keep for a model after one measurement: the new one if plausible, else the previous."""
    fresh = correction_ratio(provider_tokens, estimated_tokens, plausible=plausible)
    return previous if fresh is None else fresh
