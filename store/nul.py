"""Text Postgres cannot hold, stored faithfully: NUL (U+0000) in text columns and inside JSONB.

Postgres text and JSONB refuse U+0000, but real tools put it in their outputs, and Lethe must hand back exactly
what it was sent. Every string written is escaped reversibly with a private-use character, `ESC` (U+E000):
NUL becomes `ESC + "0"` and `ESC` itself becomes `ESC + "e"`, so any string, one that already holds `ESC`
included, reads back unchanged. Strings holding neither character, almost all of them, are written as they are.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.types import String, Text, TypeDecorator

__all__ = ["NulSafeString", "NulSafeText", "escape", "json_deserializer", "json_serializer", "unescape"]

ESC = "\ue000"
_NUL = "\x00"


def escape(text: str) -> str:
    if _NUL not in text and ESC not in text:
        return text
    return text.replace(ESC, ESC + "e").replace(_NUL, ESC + "0")


def unescape(text: str) -> str:
    if ESC not in text:
        return text
    out, i = [], 0
    while (j := text.find(ESC, i)) >= 0:
        out.append(text[i:j])
        code = text[j + 1:j + 2]
        out.append(_NUL if code == "0" else ESC)  # "e", or a stray ESC kept as it is
        i = j + (2 if code in ("0", "e") else 1)
    out.append(text[i:])
    return "".join(out)


def _walk(value: Any, fix: Any) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {fix(k): _walk(v, fix) for k, v in value.items()}
    if isinstance(value, list):
        return [_walk(v, fix) for v in value]
    return value


def json_serializer(value: Any) -> str:
    """JSON for a JSONB/JSON column. `ensure_ascii` makes both characters show as escapes, so one scan of the
    text tells whether any string needs escaping (a false alarm only costs the slow path)."""
    text = json.dumps(value)
    if "\\u0000" in text or "\\ue000" in text:
        text = json.dumps(_walk(value, escape))
    return text


def json_deserializer(text: str) -> Any:
    value = json.loads(text)
    # JSONB hands ESC back as the character itself; JSON text kept as written may spell it as an escape.
    marked = ESC in text or "\\ue000" in text or "\\uE000" in text
    return _walk(value, unescape) if marked else value


class NulSafeText(TypeDecorator[str]):
    """A text column that keeps NUL (see the module's note)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Any) -> str | None:
        return None if value is None else escape(value)

    def process_result_value(self, value: str | None, dialect: Any) -> str | None:
        return None if value is None else unescape(value)


class NulSafeString(NulSafeText):
    """A bounded `String(n)` column that keeps NUL."""

    impl = String
    cache_ok = True
