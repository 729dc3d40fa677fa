"""Does a user message ask about the past? Such a message gets a larger recall block: what it asks for is most
likely in what the view no longer shows, and an answer needs the records, not a hint of them.

Read from the words alone (no model in the hot path): a question ("?", or one opened by a question word), or a
message that points back ("remember", "last time", "you said", "earlier").
"""

from __future__ import annotations

import re

__all__ = ["asks_about_past"]

# Words that open a question even when its "?" is left off; "can", "is" and the like open requests as often.
_OPENERS = frozenset("what when where who whom whose which why how did was were".split())
_BACK = re.compile(
    r"\b(remember|recall|remind|earlier|before|last (?:time|week|month|year)|you (?:said|told|mentioned)|"
    r"i (?:said|told|mentioned)|we (?:said|talked|discussed|agreed)|ago|back then|previously)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z']+")


def asks_about_past(text: str) -> bool:
    """A question, or a message that points back at something said before."""
    stripped = text.strip()
    if not stripped:
        return False
    if "?" in stripped or _BACK.search(stripped):
        return True
    first = _WORD.search(stripped.lower())
    return first is not None and first.group(0) in _OPENERS
