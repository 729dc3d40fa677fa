"""Which messages of a request Lethe already holds, by content hash and order.

Agents either resend their whole history (perhaps trimmed at the front) or send only what is new, and their
transcripts lack what report took out: a note call, and the tool result Lethe wrote for it. So the held side
is compared as the agent holds it: each message's agent-visible hash, with the messages an agent may or may
not have kept (a reply that was only a note call) marked optional.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["HeldMessage", "content_hash", "new_messages_start"]


def content_hash(message: Any) -> str:
    """A stable hash of a message's JSON, independent of key order."""
    canonical = json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True)
class HeldMessage:
    """A stored message as the agent would hold it: its hash, and whether the agent may have dropped it."""

    agent_hash: str
    optional: bool = False


def _aligns_to_end(held: Sequence[HeldMessage], start: int, incoming: Sequence[str]) -> int | None:
    """Walk `incoming` against `held` from `start`; the count of incoming matched if every held message
    from `start` on is matched or optional (or incoming runs out first), else None."""
    i, j = 0, start
    while j < len(held):
        if i < len(incoming) and incoming[i] == held[j].agent_hash:
            i, j = i + 1, j + 1
        elif held[j].optional:
            j += 1
        elif i == len(incoming):
            return i  # the agent sent a stretch of what is held and nothing after it
        else:
            return None
    return i


def new_messages_start(held: Sequence[HeldMessage], incoming: Sequence[str]) -> int:
    """Index in `incoming` where the messages Lethe does not hold yet begin.

    A resend lines up with the end of what is held (its first message matches some held message, and from
    there on both agree, optional ones aside); otherwise everything incoming is new.
    """
    if not held or not incoming:
        return 0
    candidates = [j for j, message in enumerate(held) if message.agent_hash == incoming[0]]
    # The earliest alignment is the longest resend; later ones would treat held messages as new again.
    for start in candidates:
        matched = _aligns_to_end(held, start, incoming)
        if matched is not None:
            return matched
    return 0
