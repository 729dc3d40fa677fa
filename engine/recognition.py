"""Which messages of a request Lethe already holds, by content hash and order.

Agents either resend their whole history (perhaps trimmed at the front) or send only what is new, and their
transcripts lack what report took out: a note call, and the tool result Lethe wrote for it. So the held side
is compared as the agent holds it: each message's agent-visible hash, with the messages an agent may or may
not have kept (a reply that was only a note call) marked optional.

Only the tail of what is held can line up with a request (every held user message after the alignment must be
matched by one sent), so `recognisable_tail` bounds the comparison by the request, not by the memory's length.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "HeldMessage",
    "agent_hash",
    "content_hash",
    "edited_user_message",
    "rehashed",
    "new_messages_start",
    "recognisable_tail",
    "replaced_user_message",
]


def content_hash(message: Any) -> str:
    """A stable hash of a message's JSON, independent of key order."""
    canonical = json.dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def agent_hash(message: Any) -> str:
    """The hash a message is recognised by: its content hash, with a content of one plain text block taken as
    that text. Both APIs read `"content": "hi"` and `[{"type": "text", "text": "hi"}]` alike, and an agent may
    keep a reply in either form (Anthropic's replies come as blocks; many agents keep only the text)."""
    if isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
                and content[0].keys() == {"type", "text"} and content[0]["type"] == "text" \
                and isinstance(content[0]["text"], str):
            message = {**message, "content": content[0]["text"]}
    return content_hash(message)


def rehashed(body: Any, stored: str | None) -> str | None:
    """A message's stored agent hash as `agent_hash` makes it. Hashes stored before a plain text block and its
    text were one message are each the content hash of the message as the agent held it; where that was the body
    itself (every message the agent wrote, every reply without a note call), its hash now is `agent_hash(body)`.
    Any other stored hash is kept as it is."""
    if stored is not None and stored == content_hash(body):
        return agent_hash(body)
    return stored


@dataclass(frozen=True)
class HeldMessage:
    """A stored message as the agent would hold it: its hash, whether the agent may have dropped it, and
    whether it opens a turn (a user message)."""

    agent_hash: str
    optional: bool = False
    opens_turn: bool = False
    # Its place in the memory (0 where it does not matter): an edit names the message it edits by it.
    seq: int = 0


def _walk(held: Sequence[HeldMessage], start: int, incoming: Sequence[str]) -> tuple[int, int]:
    """Match `incoming` against `held` from `start`, skipping held messages that are optional: how far each got
    (incoming matched, held passed) when they first disagree or one runs out."""
    i, j = 0, start
    while j < len(held):
        if i < len(incoming) and incoming[i] == held[j].agent_hash:
            i, j = i + 1, j + 1
        elif held[j].optional:
            j += 1
        else:
            break
    return i, j


def _aligns_to_end(held: Sequence[HeldMessage], start: int, incoming: Sequence[str]) -> int | None:
    """Walk `incoming` against `held` from `start`; the count of incoming matched if every held message
    from `start` on is matched or optional, or if incoming runs out where what is held after it is only the
    rest of the last turn (a resend made before the reply was appended); else None."""
    i, j = _walk(held, start, incoming)
    if j == len(held):
        return i
    if i == len(incoming):
        # A stretch of what is held with only the latest replies after it: nothing new. With a user
        # message after it, the stretch is old and what was sent is new (a delta repeating "ok").
        return None if any(h.opens_turn for h in held[j:]) else i
    return None


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


def replaced_user_message(held: Sequence[HeldMessage], incoming: Sequence[str]) -> int | None:
    """Where the new messages start when the request replaces the held history's last message, a user message
    no reply followed (an edited message, a regenerate, a retry with new text): the request lines up with
    everything held before it and goes on with another message. None when it does not.

    Without this, such a request lines up with nothing held and its whole history would be stored again."""
    if len(held) < 2 or not held[-1].opens_turn or not incoming or incoming[-1] == held[-1].agent_hash:
        return None  # nothing to replace, or it still ends with the held message
    start = new_messages_start(held[:-1], incoming)
    # Something held must line up (a request of new messages only says nothing of what it replaces), and what
    # follows must be new: another message in the replaced one's place.
    if start == 0 or start >= len(incoming) or incoming[start] == held[-1].agent_hash:
        return None
    return start


def edited_user_message(held: Sequence[HeldMessage], incoming: Sequence[str],
                        incoming_users: Sequence[bool]) -> tuple[int, HeldMessage] | None:
    """Where the new messages start in `incoming`, and the held user message the first of them edits, when the
    request resends the history from its first message up to an earlier user message and says that one
    otherwise (an edited message: the conversation branches from there). None when it does not.

    Only a resend from the memory's first message is read so: the walk then costs what the request holds."""
    if not held or not incoming or incoming[0] != held[0].agent_hash:
        return None
    i, j = _walk(held, 0, incoming)
    if i == len(incoming) or j >= len(held) - 1 or not held[j].opens_turn or not incoming_users[i]:
        return None
    return i, held[j]


def recognisable_tail(held: Sequence[HeldMessage], incoming_turns: int) -> Sequence[HeldMessage]:
    """The part of `held` a request that opens `incoming_turns` turns can line up with: everything after the
    held user message before the last `incoming_turns` of them (a request may begin mid-turn)."""
    seen = 0
    for index in range(len(held) - 1, -1, -1):
        # A turn an edit branched away from (its messages optional) is not one the request still holds.
        if held[index].opens_turn and not held[index].optional:
            seen += 1
            if seen > incoming_turns:
                return held[index + 1:]
    return held
