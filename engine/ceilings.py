"""Which ceiling a request is planned against: the model's own, when one is known, else the configured one.

A table maps model names to ceilings. A name matches its own entry, or the longest entry it extends at a
separator (`gpt-4o-2024-08-06` takes `gpt-4o`'s, never `gpt-4`'s), with or without a router's prefix
(`openai/gpt-4o`). A tenant's own table is read before the deployment's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["ceiling_for", "match_model"]

_SEPARATORS = "-:@."


def match_model(model: str, table: Mapping[str, int]) -> int | None:
    """The table's ceiling for `model`, or None when no entry names it."""
    name = model.strip().lower()
    for candidate in dict.fromkeys((name, name.rsplit("/", 1)[-1])):
        if candidate in table:
            return table[candidate]
        best = max((key for key in table if candidate.startswith(key) and candidate[len(key)] in _SEPARATORS),
                   key=len, default=None)
        if best is not None:
            return table[best]
    return None


def ceiling_for(model: str | None, *, default: int, tables: Iterable[Mapping[str, int]]) -> int:
    """The first table naming `model` decides; none does (or no model): `default`."""
    if model:
        for table in tables:
            found = match_model(model, table)
            if found is not None:
                return found
    return default
