"""Which messages of a request Lethe already holds, by content hash and order.

Agents either resend their whole history or send only what is new; both must store each message once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["content_hash", "new_suffix_start"]


def content_hash(message: dict[str, Any]) -> str:
    """A stable hash of a message's JSON, independent of key order."""
    canonical = json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_suffix_start(held: Sequence[str], incoming: Sequence[str]) -> int:
    """Index in `incoming` where the messages Lethe does not hold yet begin.

    The longest stretch at the start of `incoming` that repeats the end of `held` is taken as known:
    a full resend overlaps all of `held`, a delta overlaps nothing or only its last messages.
    """
    longest = min(len(held), len(incoming))
    for overlap in range(longest, 0, -1):
        if list(held[len(held) - overlap:]) == list(incoming[:overlap]):
            return overlap
    return 0
