"""Recently used memories' messages, kept decoded in the gateway so a decorate reads only what is new.

Messages are append-only, so a cached list stays true; it is extended from Postgres with whatever came since
(from this replica or another) and replaced only after its transaction commits, so a rolled-back call never
leaves a message here that Postgres does not hold. An erased memory comes back under a new row id.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from engine.messages import StoredMessage

__all__ = ["MessageCache"]


class MessageCache:
    def __init__(self, *, max_messages: int = 200_000) -> None:
        self.max_messages = max_messages
        self._lists: OrderedDict[tuple[str, int], list[StoredMessage]] = OrderedDict()
        self._size = 0

    def get(self, tenant_id: str, memory_pk: int) -> list[StoredMessage]:
        found = self._lists.get((tenant_id, memory_pk))
        if found is None:
            return []
        self._lists.move_to_end((tenant_id, memory_pk))
        return found

    def put(self, tenant_id: str, memory_pk: int, messages: Sequence[StoredMessage]) -> None:
        key = (tenant_id, memory_pk)
        self._size -= len(self._lists.pop(key, []))
        if len(messages) > self.max_messages:
            return
        self._lists[key] = list(messages)
        self._size += len(messages)
        while self._size > self.max_messages:
            _, evicted = self._lists.popitem(last=False)
            self._size -= len(evicted)
