"""Answers encoded once: the bytes sent are the bytes an idempotent retry gets back."""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["encode"]


def encode(value: Any) -> bytes:
    """JSON bytes of an answer; orjson for speed (a decorate's answer is the whole request), the standard
    library for what orjson refuses (integers past 64 bits that a request may carry)."""
    try:
        return orjson.dumps(value)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
