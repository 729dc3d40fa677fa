"""The request's time: the server's, or `X-Lethe-Now` where the deployment allows it."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from contracts.errors import InvalidInput
from store.models import MemoryRow

__all__ = ["Clock"]


@dataclass(frozen=True)
class Clock:
    now: datetime
    overridden: bool = False

    def advance(self, memory: MemoryRow) -> datetime:
        """The memory's time never goes backwards: an override that would is refused."""
        if memory.latest_at is not None and self.now < memory.latest_at:
            if self.overridden:
                raise InvalidInput(
                    f"X-Lethe-Now {self.now.isoformat()} is before this memory's latest time "
                    f"{memory.latest_at.isoformat()}",
                    field="X-Lethe-Now",
                )
            return memory.latest_at  # a replica's clock slightly behind another's
        return self.now
